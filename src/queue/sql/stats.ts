import type { QuotedIdentifier } from '../../config/identifiers.js';
/**
 * The jobs per status over all jobs, and per kind and status over jobs that have a kind; the jobs
 * without a kind are the difference. `due` counts those whose run_after has come: for waiting
 * jobs, those not delayed. Waiting and claimed jobs are counted from their own index entries, the
 * kinds' as ranges of the kind index (two per kind); done and failed ones are kept counts
 * (claim/sql/counters.ts, scope `kept`, '' for no kind), read from jobq_counters. The kind index
 * holds copies of status and run_after that are NULL for jobs without a kind (schema 4), so it
 * cannot count those itself. One statement: one snapshot. The kinds are given (LISTED_KINDS_SQL):
 * read from jobq_counters in the same statement, by a join or a semi-join, the counts per kind
 * went through a temporary table, 1.8x slower on a million jobs. Params: [kinds] (none: no kind
 * part), queue, queue.
 */
export const COUNT_JOBS_SQL = (table: QuotedIdentifier, withKinds: boolean) => `
  SELECT 'all' AS scope, NULL AS kind, status, COUNT(*) AS count, SUM(run_after <= NOW(6)) AS due
    FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status IN ('unclaimed', 'claimed')
   GROUP BY status
  ${withKinds ? `UNION ALL
  SELECT 'kind', kind, kind_status, COUNT(*), SUM(kind_run_after <= NOW(6))
    FROM ${table} FORCE INDEX (kind_status_group_priority_run_after)
   WHERE kind IN (?) AND kind_status IN ('unclaimed', 'claimed')
   GROUP BY kind, kind_status` : ''}
  UNION ALL
  SELECT 'kept', kind, 'done', SUM(done_jobs), NULL FROM jobq_counters WHERE queue = ? GROUP BY kind
  UNION ALL
  SELECT 'kept', kind, 'failed', SUM(failed_jobs), NULL FROM jobq_counters WHERE queue = ? GROUP BY kind`;

/**
 * The kinds of the queue, which enqueue lists before their first job goes in: those stats() counts
 * the jobs of. (The servers read an index's distinct kinds either by a full scan or loosely, as
 * its statistics say, and a recursive walk of it, a dive per kind, was read by both as a scan.)
 * Params: queue.
 */
export const LISTED_KINDS_SQL = "SELECT DISTINCT kind FROM jobq_counters WHERE queue = ? AND kind <> '' ORDER BY kind";

/** The highest id handed out so far: one dive at the end of the primary key. */
export const MAX_ID_SQL = (table: QuotedIdentifier) => `SELECT MAX(id) AS max_id FROM ${table}`;

/**
 * The waiting status as a range of one value, not an equality: an equality makes MariaDB read the
 * whole `ref` of the status's index entries; as a range, under FORCE INDEX, both servers read the
 * oldest entry of each priority (of each kind and group) with a loose index scan, one dive each,
 * whatever the table holds (test/stats-reads-are-bounded.test.ts).
 */
const WAITING = (column: string) => `${column} >= 'unclaimed' AND ${column} <= 'unclaimed'`;

/**
 * How long, in microseconds, the job that has waited longest since it came due has waited (what
 * to alert on: a low priority job that never gets its turn counts too), and the highest id (for
 * throughput between two readings). With priorities in the index the longest waiter is not the
 * first entry but the first of some priority: one dive per priority.
 */
export const HEAD_AGE_AND_MAX_ID_SQL = (table: QuotedIdentifier) => `
  SELECT (SELECT TIMESTAMPDIFF(MICROSECOND, MIN(p.oldest), NOW(6))
            FROM (SELECT status, waiting_priority, MIN(run_after) AS oldest FROM ${table} FORCE INDEX (status_priority_run_after)
                   WHERE ${WAITING('status')} AND run_after <= NOW(6)
                   GROUP BY status, waiting_priority) AS p) AS age_us,
         (SELECT MAX(id) FROM ${table}) AS max_id`;

/**
 * Per kind, how long the longest-waiting due job has waited since it came due, in microseconds:
 * one dive per group and priority of each kind. Jobs without a kind are not in the kind index
 * (see schema 4); HEAD_AGE_AND_MAX_ID_SQL covers every job.
 */
export const OLDEST_WAITING_BY_KIND_SQL = (table: QuotedIdentifier) => `
  SELECT p.kind, TIMESTAMPDIFF(MICROSECOND, MIN(p.oldest), NOW(6)) AS age_us
    FROM (SELECT kind, kind_status, job_group, waiting_priority, MIN(kind_run_after) AS oldest
            FROM ${table} FORCE INDEX (kind_status_group_priority_run_after)
           WHERE kind IS NOT NULL AND ${WAITING('kind_status')} AND kind_run_after <= NOW(6)
           GROUP BY kind, kind_status, job_group, waiting_priority) AS p
   GROUP BY p.kind`;

/** Claimed jobs per owner, with how many of them have an expired lease, and the shortest lease left. */
export const CLAIMED_BY_OWNER_SQL = (table: QuotedIdentifier) => `
  SELECT owner_id, COUNT(*) AS count, SUM(run_after <= NOW(6)) AS expired,
         TIMESTAMPDIFF(MICROSECOND, NOW(6), MIN(run_after)) AS lease_left_us
    FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status = 'claimed'
   GROUP BY owner_id ORDER BY owner_id`;

/** The server as `stats` describes it. The isolation variable's name differs by server and version. */
export const SERVER_INFO_SQL = (isolationVariable: 'transaction_isolation' | 'tx_isolation') => `
  SELECT @@version AS version, @@global.${isolationVariable} AS isolation,
         @@global.binlog_format AS binlog_format, @@global.log_bin AS log_bin`;
