import type { QuotedIdentifier } from '../../config/identifiers.js';
/**
 * New jobs, counted apart from the other kept counts (claim/sql/counters.ts). Each enqueue adds a
 * row here, in its own transaction, with the number of jobs it put in per kind: an insert, where
 * adding to a counter row would hold that row until the enqueue's transaction ends. A caller's
 * transaction stays open as long as the caller likes, and every other enqueue of its counter row
 * would wait for it; two Galera nodes that met at one row would fail one enqueue. stats() adds
 * these rows in and folds them into jobq_counters; a recount replaces them.
 */

export const CREATE_NEW_JOBS_TABLE_SQL = (kindCollation: string) => `
  CREATE TABLE IF NOT EXISTS jobq_new_jobs (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    kind VARCHAR(64) CHARACTER SET utf8mb4 COLLATE ${kindCollation} NOT NULL,
    jobs INT NOT NULL,
    PRIMARY KEY (queue, id),
    KEY id (id)
  ) ENGINE = InnoDB COMMENT = 'jobq: jobs enqueued, per kind, not yet added to jobq_counters'`;

/**
 * New jobs whose number is known: those of keys no row can hold (keys jobq made, sent the first
 * time; keys a partitioned table's insert has just recorded). Params per kind: queue, kind ('' for
 * none), jobs.
 */
export const countNewJobsSql = (table: string, kinds: number) =>
  `INSERT INTO ${table} (queue, kind, jobs) VALUES ${Array.from({ length: kinds }, () => '(?, ?, ?)').join(', ')}`;

/**
 * New jobs whose keys another job may hold (keys the caller gave; an insert sent again): the rows
 * the insert just made, found by its marker in their claim token (a waiting job's claim token is
 * the marker of the insert that made it; a key taken before keeps its row's). Params: queue,
 * [keys], marker.
 */
export const COUNT_NEW_JOBS_BY_MARKER_SQL = (newJobs: string, jobs: QuotedIdentifier) => `
  INSERT INTO ${newJobs} (queue, kind, jobs)
  SELECT ?, IFNULL(kind, ''), COUNT(*) FROM ${jobs} FORCE INDEX (job_key)
   WHERE job_key IN (?) AND claim_token = ?
   GROUP BY kind`;

/** The oldest new-job rows no fold or enqueue holds, locked. Params: queue, limit. */
export const LOCK_NEW_JOBS_SQL = 'SELECT id, kind, jobs FROM jobq_new_jobs WHERE queue = ? ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED';

/** Params: queue, [ids]. */
export const DELETE_NEW_JOBS_SQL = 'DELETE FROM jobq_new_jobs WHERE queue = ? AND id IN (?)';

/**
 * The recount's lock: every new-job row of the queue and, under REPEATABLE READ, the gap after
 * them, so that enqueues that counted their jobs are committed first and those that have not yet
 * wait for the recount. Params: queue.
 */
export const LOCK_ALL_NEW_JOBS_SQL = 'SELECT id FROM jobq_new_jobs WHERE queue = ? FOR UPDATE';

/** Params: queue. */
export const FORGET_NEW_JOBS_SQL = 'DELETE FROM jobq_new_jobs WHERE queue = ?';
