import type { Database } from '../db/database.js';
import type { CandidateSource } from '../db/replica.js';
import { claimTurn, settleTurn } from './turn.js';
import type { SettleResult, TurnResult } from './turn-request.js';
import { GroupRotation } from './fair-share.js';
import { noKindRules, type KindRules } from './kind-rules.js';
import { TotalsTally } from './running-totals.js';
import { cancellation, completion, FAIL_FOR_GOOD, failure, handBack, leaseRenewal, putOff, type RetryPolicy, type PendingWrite } from './pending-writes.js';
import { DEFAULT_PRIORITY } from '../config/defaults.js';
import type { PreferredRange } from './sql/claim.js';
import { EMPTY_CLAIM, type Claim, type ClaimOptions, type Settlement } from './types.js';
import { IdleBackoff, type WaitReason } from './idle-backoff.js';
import { DueTimers } from './due-timers.js';
import { OPEN_GATE, type TurnGate } from './turn-gate.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/** What every claim of a loop asks for. */
export interface ClaimLoopSettings extends RetryPolicy {
  batchSize: number;
  leaseSeconds: number;
  keepDone: boolean;
  kinds?: readonly string[];
  /** A range a claim of the whole queue reads first (the article's demo); default none, oldest first. */
  preferred?: () => PreferredRange;
  /** Recorded as `owner_id` (the article's consumer number); 0 is nobody. */
  ownerId: number;
  /** The queue's name (the table's): claims honour its paused kinds, settles add to its running totals. */
  queue: string;
  /**
   * Pause this long after a turn that had to wait for a lane: a worker's extra loops, which help
   * only while work piles up and lanes are free. Default never.
   */
  pauseWhenLanesBusyMs?: number;
  /**
   * Pause this long after a turn that claimed only a few jobs (under a quarter of those asked
   * for): fewer, fuller turns while jobs trickle in. Default never.
   */
  pauseAfterLightClaimMs?: number;
  /** Read candidates there (a replica) while it can be used. */
  candidateSource?: CandidateSource;
  /** The table's partition count: lanes read their partitions (table-layout.ts). */
  partitions?: number;
  /** The longest wait between two looks at an empty queue (IdleBackoff); default 20 ms. */
  pollIntervalMs?: number;
  /** How the loop hears of due jobs committed while it waits (src/wake-ups/). */
  wakeUps?: WakeUps;
}

/** Word of due jobs committed by this process or by others, for a loop that waits on an empty queue. */
export interface WakeUps {
  /**
   * Calls `wake` whenever due jobs were committed, with the newest job id when that is all that is
   * known (the jobs up to it may be ones the loop took already); returns the unsubscribe.
   */
  subscribe(wake: (newest?: number) => void): () => void;
  /** The loop is about to wait on an empty queue. */
  idle(): void;
  /**
   * A turn made scheduled jobs waiting: the other idle workers look too. Their kinds may be ones
   * this loop does not claim, and their own timers for the same jobs find them taken.
   */
  madeDue(): void;
}

/** A claim this loop holds jobs of: which, and its lease as this loop knows it. */
interface HeldClaim {
  ids: Set<number>;
  /** When its claim came back, or when its last renewal was sent. */
  renewedAt: number;
  /** The lease holds in the server at least until then: the sending of its claim, or of its last renewal that renewed every job, plus its length. */
  leaseUntil: number;
  /** The lease ran out before a renewal came back. */
  lost: boolean;
}

/** Where claimed jobs go: the worker's handlers, or the article's batch consumer. */
export interface JobSink {
  /** How many jobs the loop may claim now, reserved until `accept`; 0: wait for `wake()`. */
  reserve(): number;
  /** Hands over what a turn claimed for a reservation (possibly nothing). */
  accept(claim: Claim, reserved: number): void;
  /**
   * How many claimed jobs could start at once now: a turn takes no more of limited kinds (a job
   * in hand but not started holds a slot, or spends a rate, while it waits). All it reserves
   * when absent.
   */
  startable?(): number;
}

// A loop reads the rules on kinds afresh at most this often, in the turn that comes next: a pause
// or a limit takes hold within this plus one turn. Reading them in every turn of a drain cost the
// server a statement per 200 jobs for nothing.
const RULES_READ_EVERY_MS = 100;

// An idle loop reads when the next scheduled job comes due at most this often, in the turn that
// comes next, and sets a timer for it (comingDue): a job delayed by another process starts on time
// when the producer's own timer is gone (a `jobq enqueue` that exited, a delay beyond a minute).
const NEXT_DUE_READ_EVERY_MS = 250;

// A loop whose last turn filled its batch (a backlog) reads the scheduled jobs that came due at
// most this often, or at once when told of due jobs: in every turn, that read was one statement in
// seven of a start-processing drain and 4 % of its time (bench-results/due-read-by-hand.json). A
// job that comes due while the workers have a backlog is found this much later at most, and
// claimed in the next turn the worker has room for; one that comes due on a queue that keeps up,
// in the next turn.
const DUE_READ_ON_BACKLOG_EVERY_MS = 250;

// A loop adds its counts to the running totals with the COMMIT of a turn at most this often, and
// with its last turn (see running-totals.ts).
const TOTALS_EVERY_MS = 1000;

/** Finished jobs wait at most this long to be settled when no claim turn comes sooner. */
const SETTLE_WITHIN_MS = 25;

/**
 * The claim loop, whatever runs it (`queue.work`, `jobq work`, `start-processing`'s consumers):
 * turns that settle what is finished and claim what the sink has room for, in one transaction
 * each; leases of jobs in hand renewed while they wait or run; idle back-off on an empty queue.
 * It runs until `signal` aborts, then stops claiming; `drain()` settles the rest.
 */
export class ClaimLoop {
  /** Claims with jobs not settled yet, and when their lease was last renewed. */
  private readonly held = new Map<Claim, HeldClaim>();
  /** The claims whose leases the turn under way renews. */
  private renewing: Array<{ entry: HeldClaim; token: Buffer }> = [];
  private readonly completed = new Map<Claim, number[]>();
  /** The results to keep of completed jobs, as JSON text, by id. */
  private readonly results = new Map<number, string>();
  private otherOutcomes: PendingWrite[] = [];
  private firstOutcomeAt: number | undefined;
  private wakeUp: (() => void) | undefined;
  /** Ends the back-off on an empty queue under way: only a stop or a wake-up do, not a job's end. */
  private endIdleWait: (() => void) | undefined;
  /** A wake-up told of due jobs since the turn under way began: the loop looks again before any back-off. */
  private enqueuedSince = false;
  /** A claim turn is under way: word of the newest job id waits for its end (toldOf). */
  private turning = false;
  /** The newest job id a wake-up told of while the turn under way ran. */
  private toldDuringTurn = 0;
  /** The highest job id this loop has claimed. */
  private newestClaimed = 0;
  /**
   * A wake-up ended the loop's wait (the back-off on an empty queue, or the pause after a light
   * claim): its next turn holds no lane and takes the jobs of every lane at once, not only once
   * they waited `stealAfterMs` (lanes keep busy claims apart; a waiting worker has none to keep
   * apart from).
   */
  private wokenFromWait = false;
  /**
   * The last turn found fewer candidates than it had room for: the queue has no backlog, and the
   * next turn holds no lane either, as a woken one. Lanes keep claims on a backlog apart; on a
   * short queue they only make a job wait until a turn reads its lane (one worker at 1,000 jobs a
   * second: p50 15.9 ms with them, 7.0 without, bench-results/README.md). Only a loop that hears
   * of enqueues (a worker's first) does so: a supervisor's gate also rations its consumers' turns.
   */
  private shortQueue = false;
  /** The last claim turn found no candidates at all. */
  private foundNothing = false;
  /** The loop claims nothing until a pause ends (pauseClaims). */
  private pausing = false;
  /** The rules on kinds as the last turn that read them saw them, and when that was. */
  private rules: KindRules;
  private rulesReadAt = -Infinity;
  private nextDueReadAt = -Infinity;
  private dueReadAt = -Infinity;
  /** The last claim turn filled its batch: the queue has a backlog. */
  private backlog = false;
  private readonly rotation = new GroupRotation();
  /** Counts of settled jobs and claims not yet added to the running totals, and when they last were. */
  private readonly pendingTotals = new TotalsTally();
  private totalsAddedAt = performance.now();
  /** The lane's least urgent candidate in the last claim: where the next looks below for more urgent jobs elsewhere. */
  private laneLeastUrgent = DEFAULT_PRIORITY;
  /** The settles of the turn under way, not committed yet; undefined between turns. */
  private inFlight: readonly PendingWrite[] | undefined;
  /** Jobs this loop put back for later (retries, snoozes), or read as the next due while idle, wake it when they come due. */
  private readonly comingDue = new DueTimers(() => this.dueJobs());

  constructor(
    private readonly db: Database,
    private readonly table: QuotedIdentifier,
    private readonly settings: ClaimLoopSettings,
    private readonly gate: TurnGate,
    private readonly sink: JobSink,
    private readonly onTurn: (result: SettleResult & { claim?: Claim }) => void = () => undefined,
  ) {
    this.rules = noKindRules(settings.queue);
  }

  /** The job is done: deleted (or marked done) in the next turn; kept as done with `result` (JSON text) when there is one. */
  complete(claim: Claim, id: number, result?: string): void {
    if (result !== undefined) this.results.set(id, result);
    const ids = this.completed.get(claim);
    if (ids === undefined) this.completed.set(claim, [id]);
    else ids.push(id);
    this.outcome(claim, [id]);
  }

  /** The job threw: back to the queue after a delay, or to `failed` (at once with `forGood`), in the next turn. */
  fail(claim: Claim, id: number, error: unknown, { forGood = false } = {}): void {
    this.otherOutcomes.push(...failure(this.table, claim, [id], error, forGood ? FAIL_FOR_GOOD : this.settings));
    this.outcome(claim, [id]);
  }

  /** The handler put the job off: back to the queue, due in `seconds`, its attempt given back, in the next turn. */
  snooze(claim: Claim, id: number, seconds: number): void {
    this.otherOutcomes.push(...putOff(this.table, claim, [id], seconds));
    this.outcome(claim, [id]);
  }

  /** The jobs' cancel was carried out (their handler gave up, or never started): `cancelled`, in the next turn. */
  cancel(claim: Claim, ids: readonly number[]): void {
    this.otherOutcomes.push(...cancellation(this.table, claim, ids));
    this.outcome(claim, ids);
  }

  /** The jobs were never started: back to the queue, due at once, in the next turn. */
  release(claim: Claim, ids: readonly number[]): void {
    if (ids.length === 0) return;
    this.otherOutcomes.push(...handBack(this.table, claim, ids));
    this.outcome(claim, ids);
  }

  /** Something changed (room, outcomes, stop): look again now. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Kinds paused when this loop last looked. */
  get pausedKinds(): readonly string[] {
    return this.rules.paused;
  }

  /** Jobs this loop holds or has outcomes for that are not committed yet. */
  get unsettled(): number {
    const settling = [...this.otherOutcomes, ...(this.inFlight ?? [])].filter((settle) => settle.counted);
    const completed = [...this.completed.values()].reduce((sum, ids) => sum + ids.length, 0);
    return completed + settling.reduce((sum, settle) => sum + settle.ids.length, 0) + [...this.held.values()].reduce((sum, entry) => sum + entry.ids.size, 0);
  }

  /** Every outcome recorded so far is committed: none waits for a turn, and no turn is under way. */
  get settled(): boolean {
    return this.completed.size === 0 && this.otherOutcomes.length === 0 && this.inFlight === undefined;
  }

  /**
   * The loop claims nothing now (its last turn found nothing, or it pauses its claims) and nothing
   * claimed by it waits to be settled. A pausing loop counts: a worker's extra loop pauses half a
   * second after a light claim, and `once` waited for that pause to end (its drains of 100,000
   * jobs ended 0.5 s after the last job in about half the runs) when a read of the queue answers
   * for what its next turn would find.
   */
  get idle(): boolean {
    return (this.foundNothing || this.pausing) && this.held.size === 0 && this.completed.size === 0 && this.otherOutcomes.length === 0;
  }

  async run(signal: AbortSignal): Promise<void> {
    const idle = new IdleBackoff(this.settings.pollIntervalMs);
    // A stop or a wake-up ends any wait, the idle back-off too (a job's end does not).
    const endWaits = () => {
      this.endIdleWait?.();
      this.wake();
    };
    signal.addEventListener('abort', endWaits);
    const unsubscribe = this.settings.wakeUps?.subscribe((newest) => this.toldOf(newest));
    try {
      while (!signal.aborted) {
        // Let handlers that finish at once do so first: then a fast worker claims whole batches
        // (without this, half batches: 1,456 claims for 100,000 jobs instead of about 1,000).
        await new Promise(setImmediate);
        const reserved = this.sink.reserve();
        if (reserved === 0) {
          if (this.settleDue()) await this.settleOnly();
          else await this.sleep(SETTLE_WITHIN_MS);
          continue;
        }
        let turn: TurnResult | undefined;
        try {
          turn = await this.claimTurn(reserved);
        } finally {
          this.sink.accept(turn?.claim ?? EMPTY_CLAIM, reserved);
        }
        const { claim } = turn;
        const light = claim.jobs.length > 0 && claim.jobs.length < reserved / 4;
        const pause = Math.max(turn.waitedForLane === true ? (this.settings.pauseWhenLanesBusyMs ?? 0) : 0, light ? (this.settings.pauseAfterLightClaimMs ?? 0) : 0);
        if (pause > 0) await this.pauseClaims(pause, signal);
        if (claim.jobs.length > 0) idle.reset();
        else if (turn.settlement.settled > 0) idle.freed();
        // Candidates that were all taken mean work exists: try again at once. None at all, or
        // all there was up to a limit: back off; while kinds are limited, only until a job
        // finishes, whose settle frees its slot (a limit of 50 with 50 ms handlers drained at
        // 0.62x its ideal rate, bench-results/limits-bench.json).
        const why = idleClaim(claim, reserved, turn.heldBack);
        if (why === 'empty') this.settings.wakeUps?.idle();
        if (why !== undefined) await this.backOff(idle.next(why), signal);
      }
    } finally {
      signal.removeEventListener('abort', endWaits);
      unsubscribe?.();
      this.comingDue.clear();
    }
  }

  /**
   * A wake-up: due jobs were committed, or jobs up to `newest` were. Those up to the highest id
   * the loop claimed are old news (the wait that follows a ring answers at once with the job the
   * ring was for, most often taken by the turn it woke); a turn under way is let end first.
   */
  private toldOf(newest: number | undefined): void {
    if (newest === undefined) this.dueJobs();
    else if (this.turning) this.toldDuringTurn = Math.max(this.toldDuringTurn, newest);
    else if (newest > this.newestClaimed) this.dueJobs();
  }

  /** Due jobs were committed, or came due: the loop looks at once, ending any wait. */
  private dueJobs(): void {
    this.enqueuedSince = true;
    this.endIdleWait?.();
    this.wake();
  }

  /** Settles every outcome recorded so far (after `run` has ended, once the jobs in hand are done). */
  async drain(): Promise<void> {
    await this.settleOnly(true);
  }

  private outcome(claim: Claim, ids: readonly number[]): void {
    const entry = this.held.get(claim);
    if (entry !== undefined) {
      for (const id of ids) entry.ids.delete(id);
      if (entry.ids.size === 0) this.held.delete(claim);
    }
    this.firstOutcomeAt ??= performance.now();
    this.wake();
  }

  private async claimTurn(batchSize: number): Promise<TurnResult> {
    const laneless = this.wokenFromWait || this.shortQueue;
    const lockAsRead = this.wokenFromWait && this.foundNothing;
    const skipDue = this.backlog && !this.enqueuedSince && performance.now() - this.dueReadAt < DUE_READ_ON_BACKLOG_EVERY_MS;
    this.enqueuedSince = false;
    this.wokenFromWait = false;
    const settle = this.takeSettles();
    this.inFlight = settle;
    // A turn without a lane reads the whole queue in its first round trip, which the lane row's
    // statements made 1.5-1.7 ms instead of 0.9 (bench-results/README.md, wake-ups).
    const ticket = await (laneless ? OPEN_GATE : this.gate).enter();
    let lane: number | undefined;
    this.turning = true;
    try {
      const claimOptions: ClaimOptions = {
        batchSize,
        leaseSeconds: this.settings.leaseSeconds,
        ownerId: this.settings.ownerId,
        ...(this.settings.kinds !== undefined && { kinds: this.settings.kinds }),
        ...(ticket.lane !== undefined && { lane: ticket.lane }),
      };
      const refresh = performance.now() - this.rulesReadAt >= RULES_READ_EVERY_MS;
      const rules = { ...this.rules, refresh };
      const readNextDue = this.foundNothing && performance.now() - this.nextDueReadAt >= NEXT_DUE_READ_EVERY_MS;
      // The claim's lease runs from its UPDATE, which comes after this.
      const sentAt = performance.now();
      const result = await claimTurn(this.db, this.table, {
        settle,
        claim: claimOptions,
        rules,
        rotation: this.rotation,
        ...(this.sink.startable !== undefined && { limitedRoom: this.sink.startable() }),
        totals: this.totalsFor(false),
        ...(ticket.laneRow !== undefined && { laneRow: ticket.laneRow }),
        ...(this.settings.candidateSource !== undefined && { candidateSource: this.settings.candidateSource }),
        ...(this.settings.partitions !== undefined && { partitions: this.settings.partitions }),
        ...(this.settings.preferred !== undefined && { preferred: this.settings.preferred }),
        laneLeastUrgent: this.laneLeastUrgent,
        ...(readNextDue && { readNextDue }),
        ...(skipDue && { skipDue }),
        ...(lockAsRead && { lockAsRead }),
      });
      this.counted(result, settle);
      // Jobs that came due are waiting now, in any lane: the next turn reads the whole queue at once.
      if (result.promoted !== undefined) {
        this.enqueuedSince = true;
        this.settings.wakeUps?.madeDue();
      }
      if (readNextDue) this.nextDueReadAt = performance.now();
      if (!skipDue) this.dueReadAt = performance.now();
      if (result.nextDueInMs !== undefined) this.comingDue.in(result.nextDueInMs);
      lane = result.lane;
      this.laneLeastUrgent = result.laneLeastUrgent ?? this.laneLeastUrgent;
      if (refresh && result.rules !== undefined) {
        this.rules = { ...result.rules, refresh: false };
        this.rulesReadAt = performance.now();
      }
      // Nothing found counts (for `idle`) only when the turn looked for due jobs too.
      this.foundNothing = result.claim.jobs.length === 0 && result.claim.candidates === 0 && !skipDue;
      this.backlog = result.claim.candidates >= batchSize;
      this.shortQueue = this.settings.wakeUps !== undefined && result.claim.jobs.length > 0 && result.claim.candidates < batchSize;
      for (const job of result.claim.jobs) this.newestClaimed = Math.max(this.newestClaimed, job.id);
      if (result.claim.jobs.length > 0) {
        this.held.set(result.claim, { ids: new Set(result.claim.jobs.map((job) => job.id)), renewedAt: performance.now(), leaseUntil: sentAt + this.leaseMs, lost: false });
      }
      this.inFlight = undefined;
      this.renewed(result.settlement);
      this.onTurn(result);
      return result;
    } finally {
      this.inFlight = undefined;
      ticket.leave(lane);
      this.turning = false;
      if (this.toldDuringTurn > this.newestClaimed) this.enqueuedSince = true;
      this.toldDuringTurn = 0;
    }
  }

  /** Settles what is finished; `last`: the loop's last turn, which also adds every count still pending. */
  private async settleOnly(last = false): Promise<void> {
    const settle = this.takeSettles();
    if (settle.length === 0 && !(last && !this.pendingTotals.empty)) return;
    this.inFlight = settle;
    let result: SettleResult;
    try {
      result = await settleTurn(this.db, this.table, { settle, totals: this.totalsFor(last) });
      this.renewed(result.settlement);
    } finally {
      this.inFlight = undefined;
    }
    this.counted(result, settle);
    this.onTurn(result);
  }

  /** The running totals of a turn: added with its COMMIT when a second has passed since the last time, or on the last turn. */
  private totalsFor(last: boolean): { queue: string; pending: TotalsTally; flush: boolean } {
    const flush = last || performance.now() - this.totalsAddedAt >= TOTALS_EVERY_MS;
    return { queue: this.settings.queue, pending: this.pendingTotals, flush };
  }

  /** After a turn: its counts went to the totals with the pending ones, or wait in the tally for a later turn. */
  private counted(result: SettleResult & { claimCount?: TurnResult['claimCount'] }, settle: readonly PendingWrite[]): void {
    for (const { dueInMs } of settle) if (dueInMs !== undefined) this.comingDue.in(dueInMs);
    if (result.totalsAdded) {
      this.pendingTotals.clear();
      this.totalsAddedAt = performance.now();
    } else {
      this.pendingTotals.addSettles(settle).addClaim(result.claimCount ?? 'none');
    }
  }

  /** Outcomes that have waited long enough, or leases due for renewal. */
  private settleDue(): boolean {
    const now = performance.now();
    if (this.firstOutcomeAt !== undefined && now - this.firstOutcomeAt >= SETTLE_WITHIN_MS) return true;
    for (const { renewedAt } of this.held.values()) if (now - renewedAt >= this.renewEveryMs()) return true;
    return false;
  }

  /** Leases are renewed at a third of their length: two renewals may fail before one runs out. */
  private renewEveryMs(): number {
    return this.leaseMs / 3;
  }

  private get leaseMs(): number {
    return this.settings.leaseSeconds * 1000;
  }

  /**
   * Whether the claim's lease has certainly run out in the server: no renewal came back for a
   * whole lease (the process was frozen, its event loop blocked, or the server away), so another
   * worker may have taken its jobs. It stays so: a later renewal would not undo that.
   */
  leaseLost(claim: Claim): boolean {
    const entry = this.held.get(claim);
    return entry !== undefined && this.lostLease(entry);
  }

  private lostLease(entry: HeldClaim): boolean {
    entry.lost ||= performance.now() > entry.leaseUntil;
    return entry.lost;
  }

  /**
   * After a turn committed: the leases it renewed hold at least until a lease after the renewal
   * was sent (the server renewed them after that, before its answer came, which a frozen process
   * may read much later). A renewal that did not renew every job of its claim renews none: one of
   * them is another worker's now, and the claim's lease runs out where it did.
   */
  private renewed(settlement: Settlement): void {
    const unrenewed = settlement.unrenewed ?? [];
    for (const { entry, token } of this.renewing) {
      if (!this.lostLease(entry) && !unrenewed.some((other) => other.equals(token))) entry.leaseUntil = entry.renewedAt + this.leaseMs;
    }
    this.renewing = [];
  }

  /** The outcomes recorded so far and the lease renewals due, as settle statements. */
  private takeSettles(): PendingWrite[] {
    const settles: PendingWrite[] = [];
    for (const [claim, ids] of this.completed) settles.push(...completion(this.table, claim, ids, this.settings.keepDone, this.results));
    settles.push(...this.otherOutcomes);
    this.completed.clear();
    this.results.clear();
    this.otherOutcomes = [];
    this.firstOutcomeAt = undefined;
    const now = performance.now();
    this.renewing = [];
    for (const [claim, entry] of this.held) {
      if (now - entry.renewedAt < this.renewEveryMs() / 2 || this.lostLease(entry)) continue;
      this.renewing.push({ entry, token: claim.token });
      settles.push(leaseRenewal(this.table, claim, [...entry.ids], this.settings.leaseSeconds));
      entry.renewedAt = now;
    }
    return settles;
  }

  /**
   * Claims nothing for `ms`, settling outcomes as they come due meanwhile: a job that finishes
   * during the pause is not held claimed until it ends (it would hold a slot of its kind's limit).
   */
  private async pauseClaims(ms: number, signal: AbortSignal): Promise<void> {
    const until = performance.now() + ms;
    this.pausing = true;
    try {
      for (let now = performance.now(); now < until && !signal.aborted; now = performance.now()) {
        // The pause gathers jobs that trickle in; one a wake-up told of is due at once.
        if (this.enqueuedSince) {
          this.wokenFromWait = true;
          return;
        }
        const settleAt = this.firstOutcomeAt === undefined ? until : this.firstOutcomeAt + SETTLE_WITHIN_MS;
        await this.sleep(Math.max(0, Math.min(until, settleAt) - now));
        if (this.settleDue()) await this.settleOnly();
      }
    } finally {
      this.pausing = false;
    }
  }

  private async backOff(ms: number, signal: AbortSignal): Promise<void> {
    if (ms === 0 || signal.aborted) return;
    if (this.enqueuedSince) {
      // Not waited: jobs enqueued while the turn ran may be ones it did not see.
    } else if (this.rules.limited.length === 0 && !this.rules.tableLimited) {
      await this.sleep(ms, (end) => (this.endIdleWait = end));
    } else if (this.firstOutcomeAt === undefined) {
      // Under limits a job's end wakes the loop, to claim into the slot it frees: one that ended
      // before the wait began (a handler that finishes at once) must not be missed.
      await this.sleep(ms);
    }
    if (this.enqueuedSince) this.wokenFromWait = true;
  }

  /** Waits `ms`, or until what `register` is given is called (by default: `wake()`). */
  private sleep(ms: number, register: (end: (() => void) | undefined) => void = (end) => (this.wakeUp = end)): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      register(done);
    }).finally(() => register(undefined));
  }
}

/**
 * Why the loop should wait before its next claim (IdleBackoff), if it should: the claim took no
 * job, or took less than it had room for and filled a kind's concurrency limit (nothing else was
 * due: a claim takes the room in turn across kinds).
 */
function idleClaim(claim: Claim, reserved: number, heldBack: TurnResult['heldBack']): WaitReason | undefined {
  if (claim.jobs.length > 0) return heldBack === 'full' && claim.jobs.length < reserved ? 'filled' : undefined;
  if (claim.candidates > 0) return 'contended';
  return heldBack === 'busy' ? 'busy' : heldBack === 'full' ? 'at-limit' : 'empty';
}
