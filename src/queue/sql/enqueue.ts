import type { QuotedIdentifier } from '../../config/identifiers.js';
import type { JobRow } from '../new-jobs.js';
import { UNCOUNTED_TOKEN } from '../../claim/sql/counters.js';
import { DEBOUNCE_UPDATES_SQL } from './unique-jobs.js';
import { WAITING_STATUS } from '../../claim/sql/scheduled.js';
/**
 * Inserting jobs, many rows per statement (one round trip and one commit per chunk).
 * A job's key (`given_key`, which the unique `job_key` holds) is made by the client: when a
 * connection drops during the COMMIT, the outcome is unknown, and the writer sends the same rows
 * again; rows that did land are matched by their key and left as they are, so nothing is
 * duplicated.
 * The due time is computed by the server (`NOW(6)` plus the delay), never by the client's clock;
 * a job due later is `scheduled` (sql/scheduled.ts).
 * The no-op update names given_key, not id: MySQL refuses to "update" the auto-increment column
 * of a row the same statement inserted (a key given twice in one batch), errno 1869.
 * A new job's claim token is the insert's marker, by which the insert can count the rows it made
 * (sql/new-jobs.ts), or, with `uncounted`, says that it is not counted yet (sql/uncounted-jobs.ts);
 * a claim replaces it.
 * A unique job's key held by another job makes the insert's row a duplicate of that job (job_key
 * holds it then: sql/unique-jobs.ts); `debounce` (some row debounces) adds what that does to
 * the holder.
 * Params, per row: job key, kind, payload, d, e, priority, delay in microseconds, trace context,
 * group, unique key, unique scope, timeout, and the marker unless uncounted (see insertValues).
 */
export const insertJobsSql = (table: QuotedIdentifier, rows: number, { uncounted = false, debounce = false } = {}) => `
  INSERT INTO ${table} (${INSERT_COLUMNS}) VALUES
  ${Array.from({ length: rows }, () => rowValues(uncounted)).join(',\n  ')}
  ON DUPLICATE KEY UPDATE given_key = given_key${debounce ? DEBOUNCE_UPDATES_SQL : ''}`;

// The status last: it reads the row's run_after (sql/scheduled.ts), which both servers allow in VALUES.
const INSERT_COLUMNS = 'given_key, kind, payload, d, e, priority, run_after, trace_context, job_group, unique_key, unique_while, timeout_ms, claim_token, status';
const rowValues = (uncounted: boolean) => `(?, ?, ?, ?, ?, ?, NOW(6) + INTERVAL ? MICROSECOND, ?, ?, ?, ?, ?, ${uncounted ? UNCOUNTED_TOKEN : '?'}, ${WAITING_STATUS})`;

/** The values of insertJobsSql or insertOneJobSql for these rows, sent with `marker` (none: uncounted). */
export const insertValues = (rows: readonly JobRow[], marker: Buffer | undefined): unknown[] => (marker === undefined ? rows.flat() : rows.flatMap((row) => [...row, marker]));

/**
 * One job, whose id comes back in the OK packet: on a new row, its auto-increment id; on a key
 * (or a unique key) that is held, `LAST_INSERT_ID(id)` makes the holder's id the one reported.
 * One round trip, where an INSERT and a read of the id took two. Params: as insertJobsSql, one row.
 */
export const insertOneJobSql = (table: QuotedIdentifier, { uncounted = false, debounce = false } = {}) => `
  INSERT INTO ${table} (${INSERT_COLUMNS})
  VALUES ${rowValues(uncounted)}
  ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)${debounce ? DEBOUNCE_UPDATES_SQL : ''}`;

/**
 * The jobs that hold these keys now: at most one each (the unique index, or on a partitioned
 * table jobq_job_keys, sees to it), read from the job_key index of either layout. Params: [keys].
 */
export const JOBS_BY_KEY_SQL = (table: QuotedIdentifier) => `
  SELECT job_key, MIN(id) AS id FROM ${table} FORCE INDEX (job_key) WHERE job_key IN (?) GROUP BY job_key`;

/**
 * The ids the keys ended up with, and how many of the keys are there (a covering read of the
 * unique index). Params: [keys, as job_key holds them (indexKeyOf)].
 */
export const ID_RANGE_OF_KEYS_SQL = (table: QuotedIdentifier) => `
  SELECT MIN(id) AS first_id, MAX(id) AS last_id, COUNT(*) AS found FROM ${table} FORCE INDEX (job_key) WHERE job_key IN (?)`;
