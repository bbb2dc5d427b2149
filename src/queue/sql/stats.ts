import type { QuotedIdentifier } from '../../config/identifiers.js';
import { UNCOUNTED_TOKEN } from '../../claim/sql/counters.js';
/**
 * The jobs per status and kind, without counting the waiting, done, failed and cancelled ones: those are kept
 * counts (claim/sql/counters.ts, scope `kept`, '' for no kind), the new jobs not yet folded into
 * them (sql/new-jobs.ts, scope `new`; `newRows`, how many rows those are) and the waiting jobs
 * not counted yet, after the fold mark (sql/uncounted-jobs.ts, scope `uncounted`: a range of the
 * primary key, the jobs inserted since the last fold). Counted from their own
 * index entries: the claimed jobs (scope `all` over every job; `kind`, over the kind index, two
 * ranges per kind: the jobs without a kind are the difference, the kind index holding copies of
 * status and run_after that are NULL for them, see schema 4), bounded by the workers' batches; and
 * the scheduled ones (scope `scheduled`, per kind, NULL for none: kept in the waiting count too), the
 * range of their status, and a read of each one's row for its kind. One statement: one snapshot.
 * The kinds are given (LISTED_KINDS_SQL): read in the same statement, by a join or a semi-join,
 * the counts per kind went through a temporary table, 1.8x slower on a million jobs.
 * Params: [kinds] (none: no kind part), the queue six times, then the fold mark.
 */
export const COUNT_JOBS_SQL = (table: QuotedIdentifier, withKinds: boolean) => `
  SELECT 'all' AS scope, NULL AS kind, 'claimed' AS status, COUNT(*) AS count
    FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status = 'claimed'
  ${withKinds ? `UNION ALL
  SELECT 'kind', kind, 'claimed', COUNT(*)
    FROM ${table} FORCE INDEX (kind_status_group_priority_run_after)
   WHERE kind IN (?) AND kind_status = 'claimed'
   GROUP BY kind` : ''}
  UNION ALL
  SELECT 'scheduled', kind, 'scheduled', COUNT(*)
    FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status = 'scheduled'
   GROUP BY kind
  UNION ALL
  SELECT 'kept', kind, 'unclaimed', SUM(waiting_jobs) FROM jobq_counters WHERE queue = ? GROUP BY kind
  UNION ALL
  SELECT 'kept', kind, 'done', SUM(done_jobs) FROM jobq_counters WHERE queue = ? GROUP BY kind
  UNION ALL
  SELECT 'kept', kind, 'failed', SUM(failed_jobs) FROM jobq_counters WHERE queue = ? GROUP BY kind
  UNION ALL
  SELECT 'kept', kind, 'cancelled', SUM(cancelled_jobs) FROM jobq_counters WHERE queue = ? GROUP BY kind
  UNION ALL
  SELECT 'new', kind, 'unclaimed', SUM(jobs) FROM jobq_new_jobs WHERE queue = ? GROUP BY kind
  UNION ALL
  SELECT 'newRows', NULL, 'unclaimed', COUNT(*) FROM jobq_new_jobs WHERE queue = ?
  UNION ALL
  SELECT 'uncounted', kind, 'unclaimed', COUNT(*)
    FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id > ? AND status IN ('unclaimed', 'scheduled') AND claim_token = ${UNCOUNTED_TOKEN}
   GROUP BY kind`;

/**
 * The kinds of the queue, which enqueue lists before their first job goes in: those stats() counts
 * the jobs of. (The servers read an index's distinct kinds either by a full scan or loosely, as
 * its statistics say, and a recursive walk of it, a dive per kind, was read by both as a scan.)
 * Params: queue.
 */
export const LISTED_KINDS_SQL = "SELECT DISTINCT kind FROM jobq_counters WHERE queue = ? AND kind <> '' ORDER BY kind";

/** The fold mark (sql/uncounted-jobs.ts) and the highest id: how many jobs a count of those not counted yet would read. Params: queue. */
export const FOLD_MARK_AND_MAX_ID_SQL = (table: QuotedIdentifier) => `
  SELECT IFNULL((SELECT last_id FROM jobq_fold_marks WHERE queue = ?), 0) AS mark, (SELECT IFNULL(MAX(id), 0) FROM ${table}) AS max_id`;

/** The highest id handed out so far: one dive at the end of the primary key. */
export const MAX_ID_SQL = (table: QuotedIdentifier) => `SELECT MAX(id) AS max_id FROM ${table}`;

/**
 * A status as a range of one value, not an equality: an equality makes MariaDB read the whole
 * `ref` of the status's index entries; as a range, under FORCE INDEX, both servers read the
 * oldest entry of each priority (of each kind and group) with a loose index scan, one dive each,
 * whatever the table holds (test/stats-reads-are-bounded.test.ts).
 */
const STATUS_IS = (column: string, status: 'unclaimed' | 'scheduled') => `${column} >= '${status}' AND ${column} <= '${status}'`;

/**
 * How long, in microseconds, the job that has waited longest since it came due has waited (what
 * to alert on: a low priority job that never gets its turn counts too), and the highest id (for
 * throughput between two readings). With priorities in the index the longest waiter is not the
 * first entry but the first of some priority: one dive per priority, and one for the scheduled
 * jobs that came due and wait for a claim turn to make them waiting (claim/sql/scheduled.ts).
 */
export const HEAD_AGE_AND_MAX_ID_SQL = (table: QuotedIdentifier) => `
  SELECT (SELECT TIMESTAMPDIFF(MICROSECOND, MIN(p.oldest), NOW(6))
            FROM (SELECT status, waiting_priority, MIN(run_after) AS oldest FROM ${table} FORCE INDEX (status_priority_run_after)
                   WHERE ${STATUS_IS('status', 'unclaimed')} AND run_after <= NOW(6)
                   GROUP BY status, waiting_priority
                  UNION ALL
                  SELECT status, waiting_priority, MIN(run_after) FROM ${table} FORCE INDEX (status_priority_run_after)
                   WHERE ${STATUS_IS('status', 'scheduled')} AND run_after <= NOW(6)
                   GROUP BY status, waiting_priority) AS p) AS age_us,
         (SELECT MAX(id) FROM ${table}) AS max_id`;

/** The oldest due time of each group and priority of each kind, of one status: a dive each. */
const oldestDueByGroup = (table: QuotedIdentifier, status: 'unclaimed' | 'scheduled') => `
  SELECT kind, kind_status, job_group, waiting_priority, MIN(kind_run_after) AS oldest
    FROM ${table} FORCE INDEX (kind_status_group_priority_run_after)
   WHERE kind IS NOT NULL AND ${STATUS_IS('kind_status', status)} AND kind_run_after <= NOW(6)
   GROUP BY kind, kind_status, job_group, waiting_priority`;

/**
 * Per kind, how long the longest-waiting due job has waited since it came due, in microseconds:
 * one dive per group and priority of each kind, waiting or scheduled and come due. Jobs without a
 * kind are not in the kind index (see schema 4); HEAD_AGE_AND_MAX_ID_SQL covers every job.
 */
export const OLDEST_WAITING_BY_KIND_SQL = (table: QuotedIdentifier) => `
  SELECT p.kind, TIMESTAMPDIFF(MICROSECOND, MIN(p.oldest), NOW(6)) AS age_us
    FROM (${oldestDueByGroup(table, 'unclaimed')}
          UNION ALL${oldestDueByGroup(table, 'scheduled')}) AS p
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
