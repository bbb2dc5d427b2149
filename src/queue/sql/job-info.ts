import type { QuotedIdentifier } from '../../config/identifiers.js';
/**
 * One job, whole, by primary key: what `queue.job`, `jobq job` and `queue.waitFor` read. JSON
 * columns come as text from both servers, times as Unix seconds (TIMESTAMP columns, in UTC
 * whatever the session's time zone). Params: id.
 */
export const READ_JOB_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind, job_group, CAST(payload AS CHAR) AS payload, status, priority, attempts, snoozes, lease_expiries,
         given_key, unique_key, unique_while, timeout_ms, last_error, CAST(errors AS CHAR) AS errors,
         CAST(result AS CHAR) AS result, CAST(progress AS CHAR) AS progress, owner_id,
         UNIX_TIMESTAMP(created_at) AS created_at, UNIX_TIMESTAMP(run_after) AS run_after,
         UNIX_TIMESTAMP(cancel_requested_at) AS cancel_requested_at,
         TIMESTAMPDIFF(MICROSECOND, NOW(6), run_after) AS run_after_in_us
    FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id = ?`;
