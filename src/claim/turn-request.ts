import type { CandidateSource } from '../db/replica.js';
import type { GroupRotation } from './fair-share.js';
import type { HeldBack } from './limit-spend.js';
import type { KindRules } from './kind-rules.js';
import type { ClaimCount, TotalsTally } from './running-totals.js';
import type { PendingWrite } from './pending-writes.js';
import type { PreferredRange } from './sql/claim.js';
import type { Claim, ClaimOptions, Settlement } from './types.js';

/** What a turn settles: the outcomes a loop holds finished, and the running totals that go with them. */
export interface SettleRequest {
  settle?: readonly PendingWrite[];
  /**
   * The queue's running totals (running-totals.ts): with `flush`, the counts in `pending`, this
   * turn's settles and its claim are added with the turn's COMMIT; without, the turn adds nothing
   * and says what its claim counts as, for the caller's tally.
   */
  totals?: { queue: string; pending: TotalsTally; flush: boolean };
}

/** One turn of a claim loop: settle what the loop holds finished, then claim more. */
export interface TurnRequest extends SettleRequest {
  claim: ClaimOptions;
  /**
   * Take the claim's lane by locking a row of jobq_lanes (workers that share no parent): the
   * queue's name, its lane count, and the lane to try first. Without it, `claim.lane` (if any).
   */
  laneRow?: { queue: string; lanes: number; first: number };
  /** Honour the queue's paused, limited and grouped kinds, as last seen by this loop (see kind-rules.ts). */
  rules?: KindRules;
  /** Where the loop's round-robin over the groups of each grouped kind stands (fair-share.ts); from the first group without it. */
  rotation?: GroupRotation;
  /** Most jobs of limited kinds to take: those the worker can start at once (JobSink.startable); the batch size without it. */
  limitedRoom?: number;
  /** Read the candidates there (a replica) while it can be used; the locking read stays on the primary. */
  candidateSource?: CandidateSource;
  /** The table's partition count (table-layout.ts): a lane then reads its partitions (see Lane). */
  partitions?: number;
  /**
   * The least urgent priority among the lane's candidates in the loop's last claim: the first
   * round trip looks for a more urgent job in other lanes below it (candidatesOldest). Default 0.
   */
  laneLeastUrgent?: number;
  /** A range a claim of the whole queue reads first, made afresh for each turn (candidatesPreferred). */
  preferred?: () => PreferredRange;
  /** Read when the next scheduled job comes due (an idle loop sets a timer for it). */
  readNextDue?: boolean;
  /** Leave the scheduled jobs that came due for a later turn (a loop with a backlog reads them now and then). */
  skipDue?: boolean;
  /**
   * Lock the candidates in the first round trip (sql/claim.ts, candidatesLocked): for a turn
   * without a lane on a queue that was empty, whose index ranges hold few entries to walk past.
   */
  lockAsRead?: boolean;
}

export interface SettleResult {
  settlement: Settlement;
  /** The turn added its counts and the pending ones to the running totals (`totals.flush`). */
  totalsAdded: boolean;
}

export interface TurnResult extends SettleResult {
  claim: Claim;
  /** The lane the claim read from, when it had one. */
  lane?: number;
  /** Every lane row was taken: the claim waited for one (more claimers than lanes). */
  waitedForLane?: boolean;
  /** The rules on kinds as this turn read them, for the next (with `rules`). */
  rules?: KindRules;
  /** The least urgent priority among the lane's candidates, for the next turn's request. */
  laneLeastUrgent?: number;
  /** What the claim counts as in the running totals. */
  claimCount: ClaimCount;
  /** Why limited kinds gave the claim less than its room, if they did. */
  heldBack?: HeldBack;
  /** Scheduled jobs that came due and are waiting now (sql/scheduled.ts): the next turn may claim them. */
  promoted?: number;
  /** With `readNextDue`: in how many ms the next scheduled job comes due, if one is scheduled. */
  nextDueInMs?: number;
}
