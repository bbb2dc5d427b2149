/**
 * Claiming: the article's two steps. First find candidate ids with a plain read that locks
 * nothing; then, in a short READ COMMITTED transaction, lock those of them that are still free
 * with `FOR UPDATE SKIP LOCKED` by primary key, and mark them claimed by a fresh token.
 *
 * Every statement that locks or writes names its rows by primary key with FORCE INDEX (PRIMARY):
 * on a young table with stale statistics the optimizer has been seen to plan `WHERE id IN (...)`
 * as a full scan, which at REPEATABLE READ locked hundreds of rows and deadlocked with inserts.
 *
 * Candidate queries come in two shapes: over the whole queue, on (status, waiting_priority,
 * run_after), or over some kinds of job (`work --kind`), on (kind, kind_status, waiting_priority,
 * kind_run_after). Either way every part is an index range read in index order that stops after
 * LIMIT matching entries, however long the queue is.
 */

import { DEFAULT_PRIORITY } from '../../config/defaults.js';
import type { QuotedIdentifier } from '../../config/identifiers.js';
import { UNCOUNTED_TOKEN } from './counters.js';
import { DUE_SCHEDULED_EXISTS } from './scheduled.js';

// Spreading consumers over lanes (LANE_FILTER: `id MOD lanes = lane` on a single server) so that
// they do not all fight over the head of the queue. Measured with `npm run bench` (100,000 queued
// jobs, batch 100, 2 cores, MariaDB 10.11; docs/performance.md, "The article's demo"): with every
// consumer reading the same oldest 100 ids, 10 consumers drained 2,900 jobs/s with 95 % empty
// claims (one wins each round, nine find their candidates locked); with the article's random
// first letter, 11,600 jobs/s with 23 % empty claims; with lanes,
// 3 % empty claims, only the tail of a drain being contended. The lane filter is checked on the
// index entries themselves (InnoDB secondary indexes carry the primary key): no row lookups.
// A claim gets its lane by locking a lane row (sql/lanes.ts), or, under `start-processing`, from
// the supervisor with its turn (src/claim/claim-gate.ts).
// A lane nobody claims from for a while is not stranded: once a job has waited longer than the
// steal delay, any claim that finds its own lane empty takes it (candidatesStale).

/**
 * Which jobs a claim may take: the whole queue, or jobs of some kinds only (`work` with a handler
 * map), and with `withoutKind` also the jobs that have no kind (a claim of the whole queue while
 * some kinds are paused reads the others kind by kind).
 */
export type ClaimScope = { kinds?: readonly string[]; withoutKind?: boolean };

/**
 * Waiting jobs a claim of the whole queue reads before the lane's oldest (candidatesPreferred): an
 * index of the jobs table whose first column is `status`, and a condition on its other columns,
 * with its params. Written by jobq's own code, never from user input.
 */
export interface PreferredRange {
  index: string;
  where: string;
  values: unknown[];
}

/**
 * The jobs of a lane, as a filter on index entries. Ids step by auto_increment_increment: 1 on a
 * single server, the cluster size on Galera (wsrep_auto_increment_control), where each node hands
 * out ids of one remainder. `id MOD 3` there put every job written through one node of three into
 * one lane of three; dividing by the step first spreads them again. Param: lane count.
 */
const LANE_OF_ID = '(id DIV @@auto_increment_increment) MOD ?';
/** Params: lane count, lane index. */
const LANE_FILTER = ` AND ${LANE_OF_ID} = ?`;

/** A lane to claim from first: the jobs that LANE_FILTER gives to `index` of `count`. */
export interface Lane {
  index: number;
  count: number;
  /**
   * The table's partition count when it is partitioned on id (sql/partitions.ts). With at least as
   * many partitions as lanes, a lane is a set of partitions instead of a filter on ids: partition
   * p belongs to lane p MOD count, and the lane's reads name them (`PARTITION (p1, p4)`), so the
   * server reads only their indexes. With HASH partitions and a partition count that is a
   * multiple of the lane count, that is the same set of jobs as LANE_FILTER on a single server.
   */
  partitions?: number;
}

/**
 * The lane that a claim took in the same round trip, in the session variable @jobq_lane (see
 * TAKE_LANE_SQL in sql/lanes.ts), of `count` lanes: a read of it finds nothing when no lane
 * was free, and the claim need not have guessed which lane it would get.
 */
export interface TakenLane {
  taken: true;
  count: number;
}

/** Whether lanes are sets of partitions (see Lane) rather than a filter on ids. */
export const lanesArePartitions = (count: number, partitions = 0) => count > 1 && partitions >= count;

/**
 * Where a lane's jobs are: the partitions it reads, or the filter on ids and its params; and a
 * condition for the other parts of the claim's read (none when it has its lane already).
 */
function laneRows(lane: Lane | TakenLane): { partition: string; filter: string; values: unknown[]; guard: string } {
  if ('taken' in lane) return { partition: '', filter: TAKEN_LANE_FILTER, values: [lane.count], guard: LANE_TAKEN };
  if (!lanesArePartitions(lane.count, lane.partitions)) return { partition: '', filter: LANE_FILTER, values: [lane.count, lane.index], guard: '' };
  const names = Array.from({ length: lane.partitions! }, (_, p) => p).filter((p) => p % lane.count === lane.index);
  return { partition: ` PARTITION (${names.map((p) => `p${p}`).join(', ')})`, filter: '', values: [], guard: '' };
}

/** A constant to the optimizer: without a lane, the read is an "Impossible WHERE" that touches no index. */
const LANE_TAKEN = ' AND @jobq_lane IS NOT NULL';
const TAKEN_LANE_FILTER = `${LANE_TAKEN} AND ${LANE_OF_ID} = @jobq_lane`;

const WHOLE_QUEUE: Lane = { index: 0, count: 1 };

/**
 * What part of a candidate query a row came from; the claim merges them (candidate-order.ts):
 * expired leases first, then the lane's waiting jobs, then jobs of other lanes that are ahead of
 * them by priority.
 */
export const PART = { expired: 0, lane: 1, ahead: 2 } as const;

/** A row of a candidate query. */
export interface CandidateRow {
  id: number;
  part: (typeof PART)[keyof typeof PART];
  priority: number;
}

/**
 * Which index a candidate query reads, and the columns it filters on there. The kind index holds
 * copies of status and run_after that are set only for jobs with a kind (see schema 4), and the
 * group ahead of the priority (schema 15): a kind's jobs without a group are one range of it
 * (`ungrouped`), in claim order; those with a group are read group by group (sql/groups.ts).
 */
const columns = (byKind: boolean) =>
  byKind
    ? { index: 'kind_status_group_priority_run_after', kind: 'kind = ? AND ', ungrouped: ' AND job_group IS NULL', status: 'kind_status', runAfter: 'kind_run_after' }
    : { index: 'status_priority_run_after', kind: '', ungrouped: '', status: 'status', runAfter: 'run_after' };

/** A job may be handed out when it is waiting and due, or claimed with its lease run out. */
const CLAIMABLE = `status IN ('unclaimed', 'claimed') AND run_after <= NOW(6)`;

/** What a claim reads of the jobs it locks (LOCK_CANDIDATES_SQL, candidatesLocked). */
const LOCKED_COLUMNS = `id, kind, CAST(payload AS CHAR) AS payload, attempts + (status = 'unclaimed') AS attempts, priority,
         lease_expiries + (status = 'claimed') AS leaseExpiries, trace_context AS traceContext, job_group AS \`group\`,
         snoozes, timeout_ms AS timeoutMs, cancel_requested_at IS NOT NULL AS cancelRequested,
         status = 'unclaimed' AND claim_token <> ${UNCOUNTED_TOKEN} AS waiting`;

/**
 * One index range read in index order, stopping after LIMIT entries: claimed jobs whose lease ran
 * out (their waiting_priority is 0, see schema 6), or waiting jobs that are due, by priority then
 * due time; `backwards`, from the end of the range. Params: [kind,] ...values, limit.
 */
interface RangeRead {
  sql: string;
  values: unknown[];
}

interface RangeOptions {
  /** More conditions on the index entries, with their params. */
  filter?: string;
  values?: unknown[];
  /** A PARTITION clause. */
  partition?: string;
  backwards?: boolean;
  /** Lock the jobs as they are read, and read what the claim needs of them (LOCKED_COLUMNS). */
  locking?: boolean;
}

function rangeRead(table: QuotedIdentifier, byKind: boolean, part: keyof typeof PART, { filter = '', values = [], partition = '', backwards = false, locking = false }: RangeOptions = {}): RangeRead {
  const { index, kind, ungrouped, status, runAfter } = columns(byKind);
  const [where, order] = part === 'expired'
    ? [`${status} = 'claimed'${ungrouped} AND waiting_priority = 0 AND ${runAfter} <= NOW(6)${filter}`, [runAfter, 'id']]
    : [`${status} = 'unclaimed'${ungrouped} AND ${runAfter} <= NOW(6)${filter}`, ['waiting_priority', runAfter, 'id']];
  return {
    sql: `
  (SELECT ${locking ? LOCKED_COLUMNS : `id, ${PART[part]} AS part, waiting_priority AS priority`} FROM ${table}${partition} FORCE INDEX (${index})
    WHERE ${kind}${where}
    ORDER BY ${order.map((column) => (backwards ? `${column} DESC` : column)).join(', ')} LIMIT ?${locking ? ' FOR UPDATE SKIP LOCKED' : ''})`,
    values,
  };
}

/**
 * Joins range reads with UNION ALL, once per kind when the scope names kinds (each kind is its own
 * range of the kind index; an IN list over kinds would have to sort them all). The parts are not
 * merged in the server: a derived table to sort them in cost 7 µs per job claimed (60 against 53,
 * one worker draining 100,000 jobs); the claim merges them (candidate-order.ts).
 */
function union(scope: ClaimScope, limit: number, parts: (byKind: boolean) => Array<RangeRead & { limit?: number }>): readonly [string, unknown[]] {
  const kinds = scope.kinds ?? [];
  const reads = kinds.length === 0
    ? parts(false).map((part) => ({ ...part, values: [...part.values, part.limit ?? limit] }))
    : kinds.flatMap((kind) => parts(true).map((part) => ({ ...part, values: [kind, ...part.values, part.limit ?? limit] })));
  return [reads.map((read) => read.sql).join('\n  UNION ALL'), reads.flatMap((read) => read.values)];
}

/**
 * How many jobs of the head of the queue a claim reads besides its lane when some are more urgent
 * than its lane's (candidatesAhead). Each costs the server about as much as a job claimed. A claim
 * thus takes at most this many more urgent jobs from other lanes; the claims that follow take the
 * rest.
 */
export const HEAD_READ_LIMIT = 20;

/** Waiting jobs more urgent than a priority. Param: the priority. */
const MORE_URGENT = ' AND waiting_priority < ?';

/**
 * Candidates for a claim in its lane: expired leases (the oldest work there is), the lane's
 * waiting jobs by priority and age, and one due job of the whole queue more urgent than
 * `laneLeastUrgent` (the lane's least urgent candidate as the loop's last claim saw it). When the
 * lane's least urgent comes after such a job, or after `laneLeastUrgent`, the claim reads the head
 * of the queue up to it (candidatesAhead) and takes those jobs too: a job queued at a smaller
 * priority is taken by the next claim, whichever lane it holds. Reading 20 jobs of the head in
 * every claim, whatever their priority, cost a drain at the default priority 4 to 7 %.
 *
 * The one job is read backwards from `laneLeastUrgent`. Forwards from the head of the queue, it
 * walked first past the index entries of every job claimed since InnoDB last purged (a claim's
 * UPDATE of status leaves the old entry delete-marked until then, and a read skips those one by
 * one, even past the end of its range): in a drain at the default priority (200,000 jobs, one
 * worker) the candidate query took 1.42 ms instead of 1.03 without that part; backwards from the
 * default priority, 0.23 ms against 1.2 with 50,000 such entries at the head. The lane's read
 * walks past them once, as it must. Every part is an index range read that stops after its LIMIT.
 */
export function candidatesOldest(table: QuotedIdentifier, scope: ClaimScope, lane: Lane | TakenLane = WHOLE_QUEUE, limit: number, laneLeastUrgent = DEFAULT_PRIORITY): readonly [string, unknown[]] {
  const rows = laneRows(lane);
  const withoutKind = (): [string, unknown[]] => [withoutKindRead(table, rows), [...rows.values, limit]];
  if (scope.withoutKind && (scope.kinds ?? []).length === 0) return withoutKind();
  const [sql, values] = union(scope, limit, (byKind) => [
    rangeRead(table, byKind, 'expired', { filter: rows.guard }),
    rangeRead(table, byKind, 'lane', rows),
    ...(readsAhead(scope, lane) ? [{ ...rangeRead(table, byKind, 'ahead', { filter: `${rows.guard}${MORE_URGENT}`, values: [laneLeastUrgent], backwards: true }), limit: 1 }] : []),
  ]);
  if (!scope.withoutKind) return [sql, values];
  const [extraSql, extraValues] = withoutKind();
  return [`${sql}\n  UNION ALL${extraSql}`, [...values, ...extraValues]];
}

/**
 * The ranges candidatesOldest reads for a claim of the whole queue (no lane), locking the jobs as
 * it reads them: sent after that read in the same round trip, it saves the claim the round trip of
 * LOCK_CANDIDATES_SQL. The claim still goes by the candidates the plain read found (lock.ts): of
 * those, the ones this read locked are the ones LOCK_CANDIDATES_SQL would have locked; it may lock
 * more (it reads past jobs others hold), which go back with the COMMIT. Only for a turn without
 * a lane after one that found the queue empty (a worker woken from its wait), where a round trip
 * is much of a job's wait for its start: a claim of one job took 2.22 ms with it against 2.55
 * (`claim()` made to send it, medians of 300, scratch). Under a stream of jobs the head of the ranges holds the entries
 * of jobs just claimed and not purged yet, which a locking read locks and looks up one by one: at
 * 1,000 jobs a second its round trip took 2.10 ms against 1.68 for the two it replaced.
 */
export function candidatesLocked(table: QuotedIdentifier, scope: ClaimScope, limit: number): readonly [string, unknown[]] {
  return union(scope, limit, (byKind) => [rangeRead(table, byKind, 'expired', { locking: true }), rangeRead(table, byKind, 'lane', { locking: true })]);
}

/** Whether candidatesOldest looks for one job ahead of the lane: with lanes, unless it reads only jobs without a kind. */
export function readsAhead(scope: ClaimScope, lane: Lane | TakenLane = WHOLE_QUEUE): boolean {
  return lane.count > 1 && !(scope.withoutKind && (scope.kinds ?? []).length === 0);
}

/**
 * The head of the queue in the scope, more urgent than `below` (the lane's least urgent
 * candidate): a range on the priority, in index order, stopping after `limit`.
 */
export function candidatesAhead(table: QuotedIdentifier, scope: ClaimScope, below: number, limit: number): readonly [string, unknown[]] {
  return union(scope, limit, (byKind) => [rangeRead(table, byKind, 'ahead', { filter: MORE_URGENT, values: [below] })]);
}

/**
 * Waiting jobs without a kind, from the NULL range of the kind index (its kind columns are NULL
 * for them): the status is checked on the row, so this read walks past done and failed jobs
 * without a kind; there are none unless the article's demo ran with --keep-done. Expired leases
 * of such jobs wait until nothing is paused. Params: the lane's, limit.
 */
const withoutKindRead = (table: QuotedIdentifier, lane: ReturnType<typeof laneRows>) => `
  (SELECT id, ${PART.lane} AS part, waiting_priority AS priority FROM ${table}${lane.partition} FORCE INDEX (kind_status_group_priority_run_after)
    WHERE kind IS NULL AND kind_status IS NULL AND job_group IS NULL AND kind_run_after IS NULL
      AND status = 'unclaimed' AND run_after <= NOW(6)${lane.filter}
    ORDER BY waiting_priority, id LIMIT ?)`;

/**
 * A preferred range of the claim's lane (PreferredRange; the article's demo reads the waiting jobs
 * whose `d` starts with a random letter, on (status, d)); topped up with the lane's oldest waiting
 * jobs in the same round trip, so that an unlucky range never leaves a consumer idle while work
 * waits. UNION drops ids found twice. This read does not look at priorities.
 */
export function candidatesPreferred(table: QuotedIdentifier, range: PreferredRange, lane: Lane | TakenLane = WHOLE_QUEUE, limit: number): readonly [string, unknown[]] {
  const rows = laneRows(lane);
  const expired = rangeRead(table, false, 'expired', { filter: rows.guard });
  const oldest = rangeRead(table, false, 'lane', rows);
  const sql = `${expired.sql}
  UNION
  (SELECT id, ${PART.lane} AS part, waiting_priority AS priority FROM ${table}${rows.partition} FORCE INDEX (${range.index})
    WHERE status = 'unclaimed' AND ${range.where} AND run_after <= NOW(6)${rows.filter}
    LIMIT ?)
  UNION${oldest.sql}`;
  return [sql, [limit, ...range.values, ...rows.values, limit, ...rows.values, limit]];
}

/**
 * Any lane's jobs that have waited past the steal delay: what a claim whose own lane is empty
 * takes over from a busy or dead one. A second round trip, but only when the lane was empty: in a
 * drain every job is "stale", and reading this range on every claim cost 15 % of the throughput.
 */
export function candidatesStale(table: QuotedIdentifier, scope: ClaimScope, stealAfterMicroseconds: number, limit: number): readonly [string, unknown[]] {
  return union(scope, limit, (byKind) => [rangeRead(table, byKind, 'lane', { filter: ' - INTERVAL ? MICROSECOND', values: [stealAfterMicroseconds] })]);
}

/**
 * Locks those candidates nobody else holds and that are still claimable (re-checked on the
 * latest committed row, under the lock). SKIP LOCKED never waits: rows another consumer is
 * claiming right now are simply left out. The payload comes as JSON text from both servers (MySQL
 * would otherwise send its JSON type pre-parsed, MariaDB its LONGTEXT as text). Attempts and lease
 * expiries come as MARK_CLAIMED_SQL will leave them; `waiting` (1 or 0) tells a waiting job that
 * was counted from one whose lease ran out or one not counted yet (queue/sql/uncounted-jobs.ts),
 * for the kept count of waiting jobs; `cancelRequested`, a job marked for cancelling while a run
 * of it that failed, snoozed or lost its lease was under way (queue/sql/cancel.ts), which the
 * worker cancels instead of running. Params: [ids].
 */
export const LOCK_CANDIDATES_SQL = (table: QuotedIdentifier) => `
  SELECT ${LOCKED_COLUMNS}
    FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id IN (?) AND ${CLAIMABLE}
   FOR UPDATE SKIP LOCKED`;

/**
 * Marks locked rows as ours until the lease ends. A waiting job's claim counts an attempt; a job
 * whose lease ran out keeps the attempt its last claim counted (that run never ended) and counts
 * a lease expiry instead. Both are computed before `status` changes: SET runs left to right.
 * Claimability is checked again: on one server the rows are locked and it always holds, but
 * Galera's locks are per node (see turn.ts). Params: owner id, claim token, lease in
 * microseconds, [ids].
 */
export const MARK_CLAIMED_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET attempts = attempts + (status = 'unclaimed'), lease_expiries = lease_expiries + (status = 'claimed'),
         status = 'claimed', owner_id = ?, owner_date = NOW(6), claim_token = ?,
         run_after = NOW(6) + INTERVAL ? MICROSECOND
   WHERE id IN (?) AND ${CLAIMABLE}`;

/**
 * Locked rows whose lease ran out once too often stop here, with the error saying so.
 * Params: error text, [ids].
 */
export const MARK_FAILED_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET lease_expiries = lease_expiries + 1, status = 'failed', claim_token = DEFAULT, run_after = NOW(6), last_error = ?
   WHERE id IN (?)`;

/**
 * Which of these rows which of these claim tokens hold: after a COMMIT cut off by a lost
 * connection (did it go through?), and right after every COMMIT on a Galera node (commit.ts,
 * commitTurn). Params: [ids], [tokens].
 */
export const HELD_BY_TOKENS_SQL = (table: QuotedIdentifier) => `
  SELECT id, claim_token FROM ${table} FORCE INDEX (PRIMARY) WHERE id IN (?) AND claim_token IN (?)`;

/**
 * Is there work due now (or, with `includeDelayed`, at all) in the scope? For --until-empty and
 * `once`. Index dives only, unless a claim of the whole queue leaves out `exceptKinds` (paused):
 * then each dive walks past the jobs of those kinds to the first of another (or of none). A
 * scheduled job that has come due counts whatever its kind: the claim turn that follows makes it
 * waiting (sql/scheduled.ts), and the next answer is then about its kind.
 * Params: none, or the kinds, or the kinds left out.
 */
export function hasPendingWork(table: QuotedIdentifier, scope: ClaimScope, includeDelayed: boolean, exceptKinds: readonly string[] = []): readonly [string, unknown[]] {
  const kinds = scope.kinds ?? [];
  const byKind = kinds.length > 0;
  const { index, kind, status, runAfter } = columns(byKind);
  const except = !byKind && exceptKinds.length > 0;
  const exists = (condition: string) => `EXISTS (SELECT 1 FROM ${table} FORCE INDEX (${index}) WHERE ${kind}${condition}${except ? ' AND (kind IS NULL OR kind NOT IN (?))' : ''})`;
  const [due, later] = includeDelayed ? ['', ` OR ${exists(`${status} = 'scheduled'`)}`] : [` AND ${runAfter} <= NOW(6)`, ''];
  const one = `${exists(`${status} = 'claimed'`)} OR ${exists(`${status} = 'unclaimed'${due}`)}${later}`;
  const sql = `${byKind ? kinds.map(() => one).join(' OR ') : one} OR ${DUE_SCHEDULED_EXISTS(table)}`;
  const perPart = includeDelayed ? 3 : 2;
  return [`SELECT ${sql} AS pending`, except ? Array(perPart).fill(exceptKinds) : kinds.flatMap((k) => Array(perPart).fill(k))];
}
