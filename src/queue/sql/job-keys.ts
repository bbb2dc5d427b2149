import type { QuotedIdentifier } from '../../config/identifiers.js';
/**
 * Job keys of a partitioned jobs table. MySQL and MariaDB require every unique key of a
 * partitioned table to contain the partitioning columns, so `job_key` cannot stay unique in a
 * table partitioned on `id`. Its uniqueness moves here: one row per key of each queue, naming the
 * job that holds it. An unpartitioned table keeps its unique index and never reads this table.
 *
 * A key is taken while its job exists, as with the unique index: once the job is gone (done and
 * deleted, cancelled, pruned), the next job with that key takes it over. Nothing deletes a
 * row when its job goes (that would cost every completion a statement); enqueueing a key again
 * and `prune` delete the rows of gone jobs.
 *
 * Enqueueing first tries in one round trip: insert every job, record the new keys. A key that has
 * a row already makes the recording fail with a duplicate-key error, which rolls the whole
 * transaction back; then the jobs go again the careful way: forget the keys of gone jobs, lock
 * the keys that are taken, and insert only the jobs whose key is free. The careful way costs
 * round trips and locks that an enqueue of a new key never needs.
 */

/**
 * The table's name. Statements that may run on a caller's connection (enqueue in the caller's
 * transaction) take it as a parameter, named with its database there.
 */
export const KEYS_TABLE = 'jobq_job_keys';

export const CREATE_JOB_KEYS_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_job_keys (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    job_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    job_id BIGINT UNSIGNED NOT NULL,
    PRIMARY KEY (queue, job_key)
  ) ENGINE = InnoDB COMMENT = 'jobq: job keys of partitioned jobs tables'`;

/**
 * Deletes the rows of those keys whose job is gone, or gave its key up (a cancelled job): the
 * keys are free again. Only rows that exist are looked at, so new keys cost one primary key dive
 * each. Params: queue, [keys].
 */
export const FORGET_KEYS_OF_GONE_JOBS_SQL = (table: QuotedIdentifier, keys = KEYS_TABLE) => `
  DELETE FROM ${keys}
   WHERE queue = ? AND job_key IN (?)
     AND NOT EXISTS (SELECT 1 FROM ${table} AS j WHERE j.id = ${keys}.job_id AND j.given_key IS NOT NULL)`;

/**
 * Records the keys of the jobs just inserted. A plain INSERT: a key that has a row already fails
 * it with a duplicate-key error, and a writer of the same key still in flight makes it wait for
 * that writer's COMMIT first. The jobs are read from LAST_INSERT_ID() up by primary key, at the
 * right-hand end of each partition where they were just added; by job_key it took a dive per key
 * and partition (800 for 100 jobs in 8 partitions), and batches went at half the speed. At READ
 * COMMITTED (jobq's sessions) the read is a consistent read that locks nothing: an UPDATE joined
 * to the jobs locked its way into other writers' new rows, and two generators deadlocked every
 * few batches. Params: queue, [keys].
 */
export const RECORD_KEYS_SQL = (table: QuotedIdentifier, keys: string) => `
  INSERT INTO ${keys} (queue, job_key, job_id)
  SELECT ?, job_key, id FROM ${table} FORCE INDEX (PRIMARY) WHERE id >= LAST_INSERT_ID() AND job_key IN (?)`;

/** RECORD_KEYS_SQL for one job, the last inserted: no read of the jobs. Params: queue, key. */
export const RECORD_KEY_SQL = (keys: string) => `INSERT INTO ${keys} (queue, job_key, job_id) VALUES (?, ?, LAST_INSERT_ID())`;

/** The keys among these that a job holds, locked until COMMIT. Params: queue, [keys]. */
export const TAKEN_KEYS_SQL = (keys: string) => `SELECT job_key FROM ${keys} WHERE queue = ? AND job_key IN (?) FOR UPDATE`;

/** The ids the keys ended up with, new or existing. Params: queue, [keys]. */
export const ID_RANGE_OF_KEYS_SQL = (keys: string) => `
  SELECT MIN(job_id) AS first_id, MAX(job_id) AS last_id FROM ${keys} WHERE queue = ? AND job_key IN (?)`;

/** Where the first try on a caller's connection goes back to when a key is taken. */
export const SAVEPOINT_SQL = 'SAVEPOINT jobq_enqueue';
export const ROLLBACK_TO_SAVEPOINT_SQL = 'ROLLBACK TO SAVEPOINT jobq_enqueue';

/** Every key of a queue's existing jobs, when its table becomes partitioned. Params: queue, queue. */
export const RECORD_EXISTING_KEYS_SQL = (table: QuotedIdentifier) => `
  DELETE FROM jobq_job_keys WHERE queue = ?;
  INSERT INTO jobq_job_keys (queue, job_key, job_id)
  SELECT ?, job_key, id FROM ${table} WHERE job_key IS NOT NULL`;

/** Drops a queue's keys (its table is no longer partitioned). Params: queue. */
export const FORGET_KEYS_SQL = 'DELETE FROM jobq_job_keys WHERE queue = ?';

/** A chunk of a queue's keys after `after`, in key order, for prune. Params: queue, after, limit. */
export const KEYS_AFTER_SQL = 'SELECT job_key FROM jobq_job_keys WHERE queue = ? AND job_key > ? ORDER BY job_key LIMIT ?';
