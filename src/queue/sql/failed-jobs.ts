import type { QuotedIdentifier } from '../../config/identifiers.js';
/**
 * Failed jobs for the dashboard, newest failure first: a range of the status index read backwards
 * (a failed job's run_after is when it failed), then the rows of one page. The payload comes as a
 * preview of its first 200 characters. Params: limit, offset.
 */
export const FAILED_PAGE_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind, attempts, last_error, LEFT(CAST(payload AS CHAR), 200) AS payload_preview,
         UNIX_TIMESTAMP(run_after) AS failed_at
    FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status = 'failed' AND waiting_priority = 0
   ORDER BY run_after DESC, id DESC LIMIT ? OFFSET ?`;

/**
 * Requeueing, a chunk at a time, each chunk's rows locked first: exactly the rows the UPDATE
 * changes then move from the kept count of failed jobs to that of waiting jobs, per kind. A
 * failed job whose 'active' unique key another job holds now stays failed (waiting, it would hold
 * the key twice); one taken between the lock and the UPDATE fails the chunk's transaction with a
 * duplicate key, and the chunk is locked again.
 */
const KEY_FREE = (table: QuotedIdentifier) => `
     AND NOT (f.unique_while <=> 'active' AND EXISTS (SELECT 1 FROM ${table} AS holder FORCE INDEX (job_key) WHERE holder.job_key = CONCAT(' ', f.unique_key)))`;

/** The failed jobs among these, locked. Params: [ids]. */
export const LOCK_FAILED_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind FROM ${table} AS f FORCE INDEX (PRIMARY) WHERE id IN (?) AND status = 'failed'${KEY_FREE(table)} FOR UPDATE`;

/**
 * The oldest chunk of jobs that failed before the cut, locked: the jobs that fail while a requeue
 * of every failed job runs are not part of it (nor does it chase them). Params: cut, limit.
 */
export const LOCK_FAILED_BEFORE_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind FROM ${table} AS f FORCE INDEX (status_priority_run_after)
   WHERE status = 'failed' AND waiting_priority = 0 AND run_after <= ?${KEY_FREE(table)}
   ORDER BY run_after, id LIMIT ? FOR UPDATE`;
