import type { QuotedIdentifier } from '../../config/identifiers.js';
/**
 * Retention: deleting done and failed jobs that ended before a cut, a chunk at a time. A finished
 * job's run_after is when it ended (see complete.ts), and its waiting_priority is 0, so the old
 * ones are one range of the (status, waiting_priority, run_after) index, read oldest first.
 */

/** The oldest chunk of finished jobs that ended before the cut. Params: status, age µs, limit. */
export const ENDED_BEFORE_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status = ? AND waiting_priority = 0 AND run_after < NOW(6) - INTERVAL ? MICROSECOND
   ORDER BY run_after, id LIMIT ?`;

/** How many finished jobs of a status ended before the cut: the same range, counted. Params: status, age µs. */
export const COUNT_ENDED_BEFORE_SQL = (table: QuotedIdentifier) => `
  SELECT COUNT(*) AS count FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status = ? AND waiting_priority = 0 AND run_after < NOW(6) - INTERVAL ? MICROSECOND`;

/**
 * Deletes a chunk by primary key: it locks just these rows, never a range that new jobs are
 * inserted into. The status is checked again: a failed job may have been requeued meanwhile.
 * One statement per kind, each followed by the one that takes its affected rows off the kind's
 * kept count (claim/sql/counters.ts). Params: [ids], status.
 */
export const DELETE_ENDED_SQL = (table: QuotedIdentifier) => `
  DELETE j FROM ${table} AS j FORCE INDEX (PRIMARY)
   WHERE j.id IN (?) AND j.status = ?`;
