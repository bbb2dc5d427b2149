import type { QuotedIdentifier } from '../../config/identifiers.js';
import { WAITING_STATUS } from '../../claim/sql/scheduled.js';

/**
 * While a unique job's key holds, as the `unique_while` column stores it: `waiting`, until the job
 * is first claimed; `active`, until it is done or failed; `stored`, while its row exists;
 * `debounce`, as `waiting`, and an enqueue of the key replaces the waiting job's payload and run
 * time instead of leaving it be; `window`, for a time from the first job's enqueue, whatever
 * becomes of the job (held by a row of jobq_unique_windows, not by the job's).
 */
export const UNIQUE_SCOPES = ['waiting', 'active', 'stored', 'debounce', 'window'] as const;
export type UniqueScope = (typeof UNIQUE_SCOPES)[number];

/**
 * A unique key as the job_key index holds it: behind a space, which no job key may hold, so that
 * unique keys and job keys never meet.
 */
export const heldUniqueKey = (key: string): string => ` ${key}`;

/**
 * The expression of the generated job_key column (schema 20): the job's unique key while it
 * holds (behind a space), else its job key (`given_key`). A job that was never claimed is told by
 * its owner_date, which its insert sets to its created_at and every claim moves for good.
 */
export const JOB_KEY_SQL = `IF(unique_key IS NOT NULL AND CASE unique_while
        WHEN 'window' THEN FALSE
        WHEN 'stored' THEN TRUE
        WHEN 'active' THEN status IN ('unclaimed', 'claimed', 'scheduled')
        ELSE status IN ('unclaimed', 'scheduled') AND owner_date = created_at END,
      CONCAT(' ', unique_key), given_key)`;

/**
 * What an insert that meets a held key does to the job holding it, after the ON DUPLICATE KEY
 * UPDATE of the insert: nothing, unless the new job debounces and the holder waits with the same
 * unique key; then the holder takes the new payload and run time, and the status that run time
 * gives it, set last (the conditions read it; SET runs left to right).
 */
const DEBOUNCES = "VALUES(unique_while) = 'debounce' AND status IN ('unclaimed', 'scheduled') AND unique_key = VALUES(unique_key)";
export const DEBOUNCE_UPDATES_SQL = `,
    payload = IF(${DEBOUNCES}, VALUES(payload), payload),
    run_after = IF(${DEBOUNCES}, VALUES(run_after), run_after),
    status = IF(${DEBOUNCES}, ${WAITING_STATUS}, status)`;

/** The jobs that hold these unique keys now. Params: [keys, each heldUniqueKey]. */
export const JOBS_BY_UNIQUE_KEY_SQL = (table: QuotedIdentifier) => `
  SELECT unique_key, id FROM ${table} FORCE INDEX (job_key) WHERE job_key IN (?)`;

/**
 * The windows of unique keys that hold for a time (`windowSeconds`), a row per queue and key,
 * which outlives its job: the key holds until `until`, for the job `job_id`. An enqueue opens the
 * window, or finds it open, under the row's lock, then inserts the job and names it there in the
 * same transaction: two enqueues of one key meet at the primary key, and the second waits for the
 * first to commit.
 */
export const CREATE_UNIQUE_WINDOWS_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_unique_windows (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    unique_key VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    job_id BIGINT UNSIGNED NOT NULL,
    until TIMESTAMP(6) NOT NULL,
    PRIMARY KEY (queue, unique_key),
    KEY until (until)
  ) ENGINE = InnoDB COMMENT = 'jobq: the unique keys that hold for a time'`;

/**
 * Opens the key's window for a new job (job 0 until it is named), unless it is open: a window
 * that ended is opened again. SET runs left to right: job_id reads the old end. Params: queue,
 * key, window µs.
 */
export const OPEN_WINDOW_SQL = `
  INSERT INTO jobq_unique_windows (queue, unique_key, job_id, until) VALUES (?, ?, 0, NOW(6) + INTERVAL ? MICROSECOND)
  ON DUPLICATE KEY UPDATE job_id = IF(until > NOW(6), job_id, 0), until = IF(job_id = 0, VALUES(until), until)`;

/** The job the key's window holds for: 0 when the window was just opened for a new job. Params: queue, key. */
export const WINDOW_JOB_SQL = 'SELECT job_id FROM jobq_unique_windows WHERE queue = ? AND unique_key = ?';

/** Names the job just inserted as the window's (LAST_INSERT_ID: sent right after its insert). Params: queue, key. */
export const NAME_WINDOW_JOB_SQL = 'UPDATE jobq_unique_windows SET job_id = LAST_INSERT_ID() WHERE queue = ? AND unique_key = ?';

/** A chunk of the queue's windows that ended. Params: queue, limit. */
export const DELETE_ENDED_WINDOWS_SQL = 'DELETE FROM jobq_unique_windows WHERE queue = ? AND until < NOW(6) LIMIT ?';
