import { randomBytes } from 'node:crypto';
import type { Database, Statement, Transaction } from '../db/database.js';
import type { CandidateSource } from '../db/replica.js';
import { WriteConflictError } from '../db/server-errors.js';
import { ExitCode, JobqError } from '../errors.js';
import { checkLeaseSeconds, DEFAULT_PRIORITY, DEFAULTS, MAX_BATCH_SIZE } from './defaults.js';
import { randomPrefixPattern } from './demo-jobs.js';
import type { Settle } from './settlements.js';
import { headBeforeLane, keepNoLessUrgentThanSkipped, laneLeastUrgent, orderCandidates } from './candidate-order.js';
import * as claimSql from './sql/claim.js';
import type { CandidateRow, ClaimScope, Lane, TakenLane } from './sql/claim.js';
import * as completeSql from './sql/complete.js';
import * as laneSql from './sql/lanes.js';
import type { ClaimCount, TotalsTally } from './running-totals.js';
import { claimScope, pauseSeen, withoutPausedKinds, type PauseView } from './paused-kinds.js';
import * as pauseSql from './sql/pause.js';
import type { Claim, ClaimedJob, ClaimOptions, Settlement } from './types.js';

/** One turn of a claim loop: settle what the loop holds finished, then (optionally) claim more. */
export interface TurnRequest {
  settle?: readonly Settle[];
  claim?: ClaimOptions;
  /**
   * Take the claim's lane by locking a row of jobq_lanes (workers that share no parent): the
   * queue's name, its lane count, and the lane to try first. Without it, `claim.lane` (if any).
   */
  laneRow?: { queue: string; lanes: number; first: number };
  /** Honour the queue's paused kinds, as last seen by this loop (see paused-kinds.ts). */
  pause?: PauseView;
  /**
   * The queue's running totals (running-totals.ts): with `flush`, the counts in `pending`, this
   * turn's settles and its claim are added with the turn's COMMIT; without, the turn adds nothing
   * and says what its claim counts as, for the caller's tally.
   */
  totals?: { queue: string; pending: TotalsTally; flush: boolean };
  /** Read the candidates there (a replica) while it can be used; the locking read stays on the primary. */
  candidateSource?: CandidateSource;
  /** The table's partition count (table-layout.ts): a lane then reads its partitions (see Lane). */
  partitions?: number;
  /**
   * The least urgent priority among the lane's candidates in the loop's last claim: the first
   * round trip looks for a more urgent job in other lanes below it (candidatesOldest). Default 0.
   */
  laneLeastUrgent?: number;
}

export interface TurnResult {
  settlement: Settlement;
  claim: Claim;
  /** The lane the claim read from, when it had one. */
  lane?: number;
  /** Every lane row was taken: the claim waited for one (more claimers than lanes). */
  waitedForLane?: boolean;
  /** Paused kinds as this turn read them, for the next (with `pause`). */
  pause?: PauseView;
  /** The least urgent priority among the lane's candidates, for the next turn's request. */
  laneLeastUrgent?: number;
  /** What the claim counts as in the running totals. */
  claimCount?: ClaimCount;
  /** The turn added its counts and the pending ones to the running totals (`totals.flush`). */
  totalsAdded?: boolean;
}

const NOTHING_SETTLED: Settlement = { settled: 0, lost: 0 };

/**
 * One claim turn, in one transaction and one commit:
 *   1. START TRANSACTION; settle statements; [lock a lane row;] candidates of the lane
 *   2. lock candidates FOR UPDATE SKIP LOCKED
 *   3. mark failed; mark claimed; COMMIT
 * Three round trips per batch, where the article used six and two commits. The candidate read
 * takes no locks at READ COMMITTED. Without a claim, the settle statements go in one round trip.
 */
export async function claimTurn(db: Database, table: string, request: TurnRequest): Promise<TurnResult> {
  const settles = request.settle ?? [];
  const options = request.claim;
  const reconnectsAtStart = db.counters.reconnects;
  const reconnected = () => db.counters.reconnects !== reconnectsAtStart;
  // The running totals go with the COMMIT: a counter row is held for the last round trip only.
  const flush = request.totals?.flush === true;
  const totals = (lane: number | undefined, claim: ClaimCount = 'none') =>
    flush ? request.totals!.pending.copy().addSettles(settles).addClaim(claim).statement(request.totals!.queue, lane) : [];
  if (options === undefined) {
    const counts = totals(undefined);
    if (settles.length === 0 && counts.length === 0) return { settlement: NOTHING_SETTLED, claim: noClaim(randomBytes(16), 0), totalsAdded: flush };
    const statements = [...settles.map((settle) => settle.statement), ...counts];
    const results = await db.transaction(async (tx) => (await commitTurn(db, tx, table, statements, settles)).results);
    const settlement = reconnected() ? await settlementAfterReconnect(db, table, settles) : tally(settles, results);
    return { settlement, claim: noClaim(randomBytes(16), 0), totalsAdded: flush };
  }
  const batchSize = checkBatchSize(options.batchSize);
  checkLane(options.lane);
  const leaseMicroseconds = Math.round(checkLeaseSeconds(options.leaseSeconds ?? DEFAULTS.leaseSeconds) * 1e6);
  // One token for every attempt, and what the last attempt sent with its COMMIT: if the connection
  // broke during that COMMIT, its outcome is unknown, and the next attempt looks for its own rows
  // instead of leaving them stranded until their lease runs out.
  const token = randomBytes(16);
  let committing: Claim | undefined;
  return db.transaction(async (tx) => {
    if (reconnected() && committing !== undefined && committing.jobs.length > 0) {
      const mine = await db.query<Array<{ id: number }>>(claimSql.HELD_BY_TOKENS_SQL(table), [committing.jobs.map((job) => job.id), [token]]);
      if (mine.length > 0) {
        const ids = new Set(mine.map((row) => Number(row.id)));
        const settlement = await settlementAfterReconnect(db, table, settles);
        return { settlement, claim: { ...committing, jobs: committing.jobs.filter((job) => ids.has(job.id)) } };
      }
    }
    const { laneRow, pause } = request;
    const inPartitions = (index: number, count: number): Lane => ({ index, count, ...(request.partitions !== undefined && { partitions: request.partitions }) });
    let lane = laneRow !== undefined ? inPartitions(laneRow.first, laneRow.lanes) : options.lane === undefined ? undefined : inPartitions(options.lane.index, options.lane.count);
    const scope = claimScope(options, pause);
    const first: Statement[] = settles.map((settle) => settle.statement);
    const at = (statement: Statement) => first.push(statement) - 1;
    const source = request.candidateSource;
    // The first round trip reads the lane it takes, unless the read goes to a replica (at the same
    // time) or names the lane's partitions: then it reads the lane it tries first, and reads
    // again unless that one was free at once.
    const readsTakenLane = laneRow !== undefined && source === undefined && !claimSql.lanesArePartitions(laneRow.lanes, request.partitions);
    let freeAt = -1;
    let takenAt = -1;
    if (laneRow !== undefined) {
      const take = (statement: string) => at([statement, [laneRow.queue, laneRow.first]]);
      laneSql.TAKE_LANE_SQL.firstFree.forEach(take);
      freeAt = at([laneSql.TAKEN_LANE_SQL]);
      take(laneSql.TAKE_LANE_SQL.waitIfNone);
      takenAt = at([laneSql.TAKEN_LANE_SQL]);
    }
    const refresh = pause?.refresh === true;
    const pausedAt = refresh ? at([pauseSql.PAUSED_KINDS_SQL, [pause!.queue]]) : -1;
    const presentAt = refresh && pause!.paused.length > 0 && (options.kinds ?? []).length === 0 ? at([pauseSql.KINDS_PRESENT_SQL(table)]) : -1;
    const onPrimary = async (statement: Statement) => (await tx.run(statement))[0] as CandidateRow[];
    const read = async (statement: Statement) => (await source?.read<CandidateRow>(statement)) ?? onPrimary(statement);
    const readCandidates = (from: Lane | TakenLane | undefined) => (scope === undefined ? undefined : candidates(table, options, scope, from, batchSize, request.laneLeastUrgent));
    const laneCandidates = readCandidates(readsTakenLane ? { taken: true, count: laneRow!.lanes } : lane);
    // Candidates from a replica are read while the primary takes the first round trip.
    const fromReplica = laneCandidates === undefined ? undefined : source?.read<CandidateRow>(laneCandidates.statement);
    const candidatesAt = laneCandidates === undefined || fromReplica !== undefined ? -1 : at(laneCandidates.statement);
    const [results, replicaRows] = await Promise.all([first.length > 0 ? tx.run(...first) : [], fromReplica]);
    const seen = refresh ? pauseSeen(pause!.queue, results[pausedAt], presentAt < 0 ? undefined : results[presentAt]) : pause;
    let leastUrgent: number | undefined;
    // The head of the queue, when it may hold jobs more urgent than the lane's last (see candidatesOldest).
    const withAhead = async (rows: CandidateRow[], probedBelow: number | undefined) => {
      const laneWorst = laneLeastUrgent(rows);
      leastUrgent = laneWorst ?? leastUrgent;
      const below = headBeforeLane(rows, laneWorst, probedBelow);
      return below === undefined || scope === undefined ? rows : [...rows, ...(await read(claimSql.candidatesAhead(table, scope, below, Math.min(batchSize, claimSql.HEAD_READ_LIMIT))))];
    };
    const firstRows = laneCandidates === undefined ? [] : candidatesAt >= 0 ? (results[candidatesAt] as CandidateRow[]) : (replicaRows ?? (await onPrimary(laneCandidates.statement)));
    let found = orderCandidates(await withAhead(firstRows, laneCandidates?.probedBelow), batchSize);
    let waitedForLane = false;
    if (laneRow !== undefined) {
      const laneIn = (index: number) => (results[index] as Array<{ lane: number | null }>)[0]?.lane ?? undefined;
      waitedForLane = laneIn(freeAt) === undefined;
      const taken = laneIn(takenAt);
      lane = taken === undefined ? undefined : inPartitions(Number(taken), laneRow.lanes);
      // Candidates read for the lane tried first hold only if that lane was free at once: read
      // while another claim held it, they are that claim's jobs by now.
      if (!readsTakenLane && (waitedForLane || Number(taken) !== laneRow.first)) {
        const again = readCandidates(lane);
        found = again === undefined ? [] : orderCandidates(await withAhead(await read(again.statement), again.probedBelow), batchSize);
      }
    }
    const stale = scope === undefined ? undefined : staleCandidates(table, options, scope, batchSize);
    if (found.length === 0 && lane !== undefined && lane.count > 1 && stale !== undefined) {
      found = orderCandidates(await read(stale), batchSize);
    }
    const settlement = reconnected() ? await settlementAfterReconnect(db, table, settles) : tally(settles, results);
    const extras = {
      ...(lane !== undefined && { lane: lane.index }),
      ...(waitedForLane && { waitedForLane }),
      ...(seen !== undefined && { pause: seen }),
      ...(leastUrgent !== undefined && { laneLeastUrgent: leastUrgent }),
    };
    const counted = (claimCount: ClaimCount) => ({ claimCount, totalsAdded: flush });
    /** Commits the turn; returns the claimed jobs that are this claim's after the COMMIT. */
    const commit = async <J extends ClaimedJob>(claim: ClaimCount, claimed: J[] = [], ...writes: Statement[]) =>
      (await commitTurn(db, tx, table, [...writes, ...totals(lane?.index, claim)], settles, { token, jobs: claimed })).jobs;
    if (found.length === 0) {
      await commit('none');
      return { settlement, claim: noClaim(token, 0), ...extras, ...counted('none') };
    }
    const [lockedRows] = await tx.run([claimSql.LOCK_CANDIDATES_SQL(table), [found.map((candidate) => candidate.id)]]);
    const lockedJobs = lockedRows as Array<ClaimedJob & { payload: string | null }>;
    // A kind paused since the candidates were read: its jobs stay waiting (their locks end with
    // the COMMIT) and do not count as candidates, or the loop would retry at once, and again.
    const unpaused = seen === undefined ? lockedJobs : withoutPausedKinds(lockedJobs, seen);
    const candidateCount = found.length - (lockedJobs.length - unpaused.length);
    const locked = keepNoLessUrgentThanSkipped(found, unpaused);
    if (locked.length === 0) {
      const claimCount = candidateCount > 0 ? 'empty' : 'none';
      await commit(claimCount);
      return { settlement, claim: noClaim(token, candidateCount), ...extras, ...counted(claimCount) };
    }
    const { exhausted, jobs } = takeLocked(locked);
    const writes: Statement[] = [];
    if (exhausted.length > 0) writes.push([claimSql.MARK_FAILED_SQL(table), [LEASES_RAN_OUT, exhausted]]);
    if (jobs.length > 0) {
      writes.push([claimSql.MARK_CLAIMED_SQL(table), [options.ownerId ?? 0, token, leaseMicroseconds, jobs.map((job) => job.id)]]);
    }
    committing = { token, jobs, candidates: candidateCount, failedIds: exhausted };
    const claimCount = jobs.length > 0 || exhausted.length > 0 ? 'claimed' : 'empty';
    if (db.galera !== undefined && jobs.length > 0) {
      // Galera's row locks are local to a node, and its certification does not catch every
      // lost update: on a 3-node cluster, two claims of the same 200 jobs on two nodes both
      // committed (about 1 drain in 4), and both workers ran them. So on Galera the claim's
      // UPDATE, which re-checks claimability on the latest row, goes alone, and the claim
      // commits only if it changed every row it locked. One more round trip, on Galera only.
      const updated = await tx.run(...writes);
      if ((updated.at(-1) as { affectedRows: number }).affectedRows !== jobs.length) throw new WriteConflictError('a claimed job was taken by another node');
      committing = { ...committing, jobs: await commit(claimCount, jobs) };
    } else {
      await commit(claimCount, jobs, ...writes);
    }
    return { settlement, claim: committing, ...extras, ...counted(claimCount) };
  });
}

/**
 * A turn's COMMIT; returns the statements' results and the claimed jobs that are this claim's.
 * On a Galera node the COMMIT is followed, in the same round trip, by a read of the rows the turn
 * settled and claimed. With a node SIGKILLed mid-run, a surviving node was seen to answer OK to
 * such a COMMIT whose changes never appeared: its claimed jobs went to other consumers and its
 * settled jobs stayed claimed until their lease ran out (2 runs of the node-loss test in 16). So
 * on Galera a turn believes the read, not the OK: a settled row still held by its claim means the
 * transaction did not happen, and the turn runs again (settles are idempotent by token); a claimed
 * row held by another token went to another claim after this one, and is not this claim's.
 */
async function commitTurn<J extends ClaimedJob>(
  db: Database,
  tx: Transaction,
  table: string,
  statements: Statement[],
  settles: readonly Settle[],
  claim?: { token: Buffer; jobs: J[] },
): Promise<{ results: unknown[]; jobs: J[] }> {
  const claimed = claim?.jobs ?? [];
  const settled = settles.filter((settle) => settle.counted && settle.ids.length > 0);
  const ids = [...settled.flatMap((settle) => settle.ids), ...claimed.map((job) => job.id)];
  if (db.galera === undefined || ids.length === 0) return { results: await tx.commitWith(...statements), jobs: claimed };
  const tokens = [...settled.map((settle) => settle.token), ...(claim === undefined ? [] : [claim.token])];
  const { results, read } = await tx.commitThenRead(statements, [claimSql.HELD_BY_TOKENS_SQL(table), [ids, tokens]]);
  const rows = read as Array<{ id: number; claim_token: Buffer }>;
  if (rows.some((row) => claim === undefined || !claim.token.equals(row.claim_token))) {
    throw new WriteConflictError('the COMMIT answered OK, but the rows it settled are still claimed');
  }
  if (claimed.length > 0 && rows.length === 0) throw new WriteConflictError('the COMMIT answered OK, but none of the jobs it claimed are held');
  const held = new Set(rows.map((row) => Number(row.id)));
  return { results, jobs: claimed.filter((job) => held.has(job.id)) };
}

const LEASES_RAN_OUT =
  `its lease ran out ${DEFAULTS.maxLeaseExpiries} times in a row without a worker settling it: ` +
  'each worker that held it died, hung or was stopped hard while it ran (does it crash its process?)';

/**
 * Of the locked jobs (in candidate order), those whose lease ran out once too often, and those to
 * claim: all the others, unless one of them has had a lease run out (a suspect: it may crash its
 * worker), which is then claimed alone. The rest stay waiting: their locks end with the COMMIT.
 */
function takeLocked(locked: ReadonlyArray<ClaimedJob & { payload: string | null }>): { exhausted: number[]; jobs: ClaimedJob[] } {
  const exhausted = locked.filter((job) => job.leaseExpiries >= DEFAULTS.maxLeaseExpiries).map((job) => job.id);
  const runnable = locked.filter((job) => job.leaseExpiries < DEFAULTS.maxLeaseExpiries);
  const suspect = runnable.find((job) => job.leaseExpiries > 0);
  const jobs = (suspect === undefined ? runnable : [suspect])
    .map((job) => ({ ...job, payload: job.payload === null ? null : JSON.parse(job.payload) }))
    .sort((a, b) => a.id - b.id);
  return { exhausted, jobs };
}

function noClaim(token: Buffer, candidateCount: number): Claim {
  return { token, jobs: [], candidates: candidateCount, failedIds: [] };
}

/** Settled and lost jobs, from the settle statements' affected-row counts. */
function tally(settles: readonly Settle[], results: readonly unknown[]): Settlement {
  let settled = 0;
  let owned = 0;
  settles.forEach((settle, i) => {
    if (!settle.counted) return;
    owned += settle.ids.length;
    settled += (results[i] as { affectedRows: number }).affectedRows;
  });
  return { settled, lost: owned - settled };
}

/**
 * What settling came to when a reconnect happened on the way: a statement may have been
 * committed by the lost attempt (and so changed nothing the second time), so count instead the
 * rows someone else holds now; the rest were settled by us.
 */
export async function settlementAfterReconnect(db: Database, table: string, settles: readonly Settle[]): Promise<Settlement> {
  let lost = 0;
  let owned = 0;
  for (const settle of settles) {
    if (!settle.counted || settle.ids.length === 0) continue;
    owned += settle.ids.length;
    const [row] = await db.query<Array<{ others: number }>>(completeSql.HELD_BY_OTHERS_SQL(table), [settle.ids, settle.token]);
    lost += Number(row?.others ?? 0);
  }
  return { settled: owned - lost, lost };
}

/**
 * A claim's candidate query, and the priority below which it looked for one job ahead of the lane
 * (undefined: it did not look; the article's pick never does).
 */
function candidates(table: string, options: ClaimOptions, scope: ClaimScope, lane: Lane | TakenLane | undefined, limit: number, leastUrgent = DEFAULT_PRIORITY): { statement: Statement; probedBelow: number | undefined } {
  if (options.pick === 'random-prefix' && scope.kinds === undefined) {
    return { statement: claimSql.candidatesByPrefix(table, randomPrefixPattern(), lane, limit), probedBelow: undefined };
  }
  return { statement: claimSql.candidatesOldest(table, scope, lane, limit, leastUrgent), probedBelow: claimSql.readsAhead(scope, lane) ? leastUrgent : undefined };
}

/** Jobs stranded in other lanes; none for jobs without a kind while kinds are paused (they wait for the next turn of their lane). */
function staleCandidates(table: string, options: ClaimOptions, scope: ClaimScope, limit: number): Statement | undefined {
  const stealAfterMicroseconds = Math.round((options.stealAfterMs ?? DEFAULTS.stealAfterMs) * 1000);
  if (scope.withoutKind && (scope.kinds ?? []).length === 0) return undefined;
  return claimSql.candidatesStale(table, { ...(scope.kinds !== undefined && { kinds: scope.kinds }) }, stealAfterMicroseconds, limit);
}

function checkBatchSize(batchSize: number): number {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw new JobqError(`batch size must be a whole number from 1 to ${MAX_BATCH_SIZE}, not ${batchSize}`, ExitCode.usage);
  }
  return batchSize;
}

function checkLane(lane: ClaimOptions['lane']): void {
  if (lane === undefined) return;
  if (!Number.isInteger(lane.count) || lane.count < 1 || !Number.isInteger(lane.index) || lane.index < 0 || lane.index >= lane.count) {
    throw new JobqError(`lane must have a whole count >= 1 and an index from 0 to count - 1, not ${JSON.stringify(lane)}`, ExitCode.usage);
  }
}
