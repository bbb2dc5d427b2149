import type { QuotedIdentifier } from '../../config/identifiers.js';
import { addColumnsOnceSql } from '../../db/add-columns-once.js';
/**
 * Two kinds of counts per queue and kind, in rows spread over shards.
 *
 * Jobs completed, failed for good and retried, kept as running totals: a
 * deleted job leaves no row to count. Workers add to them in the COMMIT round trip of the claim
 * turn that settles the jobs, so they cost a statement but no round trip. Each claim turn adds to
 * the row of its own lane (`shard`): no two turns in flight hold a lane, so they never wait for
 * each other's counter row. Jobs without a kind count under ''; so do the claims and empty claims
 * (claims that found candidates but locked none), which have no kind.
 *
 * And the jobs kept as `done`, `failed` and `cancelled` in the table now (done_jobs, failed_jobs,
 * cancelled_jobs): changed in
 * the same transaction as the rows they count, by every statement that makes or removes such a
 * job, so that reading them costs a few rows where counting would read every finished job. A
 * shard's figure may go below zero (a job counted done in one row is pruned in another); the sum
 * over shards is the count. A recount (queue/recount.ts) sets them from the table.
 *
 * The waiting jobs (waiting_jobs) likewise, except for new jobs: an enqueue adds its jobs to
 * jobq_new_jobs instead (sql/new-jobs.ts says why), which stats() adds in and folds into these rows.
 */

const KEPT_COUNT_COLUMNS = ['done_jobs BIGINT NOT NULL DEFAULT 0', 'failed_jobs BIGINT NOT NULL DEFAULT 0'];
const WAITING_COUNT_COLUMN = 'waiting_jobs BIGINT NOT NULL DEFAULT 0';
const CANCELLED_COUNT_COLUMN = 'cancelled_jobs BIGINT NOT NULL DEFAULT 0';

/**
 * The claim token of a waiting job not counted yet, as SQL: a claim or a cancel takes it off no
 * count (queue/sql/uncounted-jobs.ts says why there are such jobs).
 */
export const UNCOUNTED_TOKEN = "X'ffffffffffffffffffffffffffffffff'";

/** A count kept of the jobs in the table with this status. */
export type KeptCount = 'waiting_jobs' | 'done_jobs' | 'failed_jobs' | 'cancelled_jobs';

/** Every kept count, in the order keepCountsSql takes them. */
export const KEPT_COUNTS: readonly KeptCount[] = ['waiting_jobs', 'done_jobs', 'failed_jobs', 'cancelled_jobs'];

export const CREATE_COUNTERS_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_counters (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    kind VARCHAR(64) NOT NULL,
    shard SMALLINT UNSIGNED NOT NULL,
    completed BIGINT UNSIGNED NOT NULL DEFAULT 0,
    failed BIGINT UNSIGNED NOT NULL DEFAULT 0,
    retried BIGINT UNSIGNED NOT NULL DEFAULT 0,
    claims BIGINT UNSIGNED NOT NULL DEFAULT 0,
    empty_claims BIGINT UNSIGNED NOT NULL DEFAULT 0,
    ${[...KEPT_COUNT_COLUMNS, WAITING_COUNT_COLUMN, CANCELLED_COUNT_COLUMN].join(', ')},
    PRIMARY KEY (queue, kind, shard)
  ) ENGINE = InnoDB COMMENT = 'jobq: jobs completed, failed and retried since the table was made, and waiting, done and failed now, per kind'`;

/** Adds to the totals, one row per kind. Params per row: queue, kind, shard, completed, failed, retried, claims, empty claims. */
export const addCountsSql = (rows: number) => `
  INSERT INTO jobq_counters (queue, kind, shard, completed, failed, retried, claims, empty_claims) VALUES
  ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
  ON DUPLICATE KEY UPDATE completed = completed + VALUES(completed), failed = failed + VALUES(failed),
    retried = retried + VALUES(retried), claims = claims + VALUES(claims), empty_claims = empty_claims + VALUES(empty_claims)`;

/** The kept counts' columns, added to a jobq_counters made before them (the table is shared by every queue of the database). */
export const ADD_KEPT_COUNTS_SQL = addColumnsOnceSql('jobq_counters', 'done_jobs', KEPT_COUNT_COLUMNS.map((column) => `ADD COLUMN ${column}`).join(', '));

/** The kept count of waiting jobs' column, added likewise. */
export const ADD_WAITING_COUNT_SQL = addColumnsOnceSql('jobq_counters', 'waiting_jobs', `ADD COLUMN ${WAITING_COUNT_COLUMN}`);

/** The kept count of cancelled jobs' column, added likewise. */
export const ADD_CANCELLED_COUNT_SQL = addColumnsOnceSql('jobq_counters', 'cancelled_jobs', `ADD COLUMN ${CANCELLED_COUNT_COLUMN}`);

/** The totals per kind. Params: queue. */
export const TOTALS_BY_KIND_SQL = `
  SELECT kind, SUM(completed) AS completed, SUM(failed) AS failed, SUM(retried) AS retried,
         SUM(claims) AS claims, SUM(empty_claims) AS empty_claims
    FROM jobq_counters WHERE queue = ? GROUP BY kind ORDER BY kind`;

/**
 * Adds the rows the statement before it changed (ROW_COUNT(): its affected rows, which a settle
 * by claim token has only on the jobs it still owned) to a kept count, times `sign`. Sent right
 * after that statement, in the same transaction. Params: queue, kind, shard, sign.
 */
export const keepRowCountSql = (count: KeptCount) => `
  INSERT INTO jobq_counters (queue, kind, shard, ${count}) VALUES (?, ?, ?, ? * ROW_COUNT())
  ON DUPLICATE KEY UPDATE ${count} = ${count} + VALUES(${count})`;

/** Adds to the kept counts, one row per kind. Params per row: queue, kind, shard, then each of KEPT_COUNTS. */
export const keepCountsSql = (rows: number) => `
  INSERT INTO jobq_counters (queue, kind, shard, ${KEPT_COUNTS.join(', ')}) VALUES
  ${Array.from({ length: rows }, () => `(?, ?, ?, ${KEPT_COUNTS.map(() => '?').join(', ')})`).join(', ')}
  ON DUPLICATE KEY UPDATE ${KEPT_COUNTS.map((count) => `${count} = ${count} + VALUES(${count})`).join(', ')}`;

/**
 * The recount's first step: locks the queue's counter rows and, under REPEATABLE READ, the gaps
 * between them, so that every transaction that changes a kept count waits for the recount, and
 * so that the recount's snapshot (taken after) holds every change whose count it replaces.
 * Params: queue.
 */
export const LOCK_QUEUE_COUNTERS_SQL = 'SELECT shard FROM jobq_counters WHERE queue = ? FOR UPDATE';

/** Params: queue. */
export const ZERO_KEPT_COUNTS_SQL = `UPDATE jobq_counters SET ${KEPT_COUNTS.map((count) => `${count} = 0`).join(', ')} WHERE queue = ?`;

/**
 * The waiting (scheduled ones included), done, failed and cancelled jobs in all, over their ranges
 * of the status index, and per kind, over the kind index (which holds no status for jobs without a
 * kind: those are the difference).
 * Waiting jobs not counted yet are left out (a fold counts them): the waiting ones are read by
 * their rows, for their claim token. One statement, one snapshot.
 */
export const COUNT_KEPT_SQL = (table: QuotedIdentifier) => `
  SELECT NULL AS kind, status, COUNT(*) AS count
    FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status IN ('done', 'failed', 'cancelled')
   GROUP BY status
  UNION ALL
  SELECT NULL, 'unclaimed', COUNT(*)
    FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status IN ('unclaimed', 'scheduled') AND claim_token <> ${UNCOUNTED_TOKEN}
  UNION ALL
  SELECT kind, kind_status, COUNT(*)
    FROM ${table} FORCE INDEX (kind_status_group_priority_run_after)
   WHERE kind IS NOT NULL AND kind_status IN ('done', 'failed', 'cancelled')
   GROUP BY kind, kind_status
  UNION ALL
  SELECT kind, 'unclaimed', COUNT(*)
    FROM ${table} FORCE INDEX (kind_status_group_priority_run_after)
   WHERE kind IS NOT NULL AND kind_status IN ('unclaimed', 'scheduled') AND claim_token <> ${UNCOUNTED_TOKEN}
   GROUP BY kind`;

/** The shard a recount's figures go to, and the row that lists a kind: above every lane and every shard of turns without one. */
export const RECOUNT_SHARD = 65535;

/**
 * Lists kinds of the queue, a counter row each: stats() counts the waiting and claimed jobs of
 * the kinds listed here (sql/stats.ts), which enqueue lists before their first job goes in.
 * Params: per kind, queue and kind.
 */
export const listKindsSql = (kinds: number) => `INSERT IGNORE INTO jobq_counters (queue, kind, shard) VALUES ${Array.from({ length: kinds }, () => `(?, ?, ${RECOUNT_SHARD})`).join(', ')}`;

/** Every kind with jobs in the table (for a recount): one dive per kind where the server reads the index loosely, a read of the kind index where it does not. */
export const KINDS_IN_TABLE_SQL = (table: QuotedIdentifier) => `
  SELECT kind FROM ${table} FORCE INDEX (kind_status_group_priority_run_after) WHERE kind IS NOT NULL GROUP BY kind`;
