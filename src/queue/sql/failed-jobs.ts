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
