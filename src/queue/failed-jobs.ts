import type { QuotedIdentifier } from '../config/identifiers.js';
import type { Database } from '../db/database.js';
import { REQUEUE_FAILED_SQL } from '../claim/sql/complete.js';
import { FAILED_PAGE_SQL } from './sql/failed-jobs.js';
import type { FailedJob } from './types.js';

/** A page of failed jobs, the latest failure first (at most 500 a page). */
export async function readFailedJobs(db: Database, table: QuotedIdentifier, page: { offset?: number; limit?: number }): Promise<FailedJob[]> {
  const limit = Math.min(Math.max(1, Math.trunc(page.limit ?? 50)), 500);
  const offset = Math.max(0, Math.trunc(page.offset ?? 0));
  const rows = await db.query<Array<{ id: number; kind: string | null; attempts: number; last_error: string | null; payload_preview: string | null; failed_at: string }>>(
    FAILED_PAGE_SQL(table),
    [limit, offset],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    attempts: row.attempts,
    lastError: row.last_error,
    payloadPreview: row.payload_preview,
    failedAt: new Date(Number(row.failed_at) * 1000),
  }));
}

/** Puts failed jobs (all, or those with these ids) back to `unclaimed` with fresh attempts; how many. */
export async function requeueFailedJobs(db: Database, table: QuotedIdentifier, ids?: readonly number[]): Promise<number> {
  const byIds = ids !== undefined;
  if (byIds && ids.length === 0) return 0;
  return (await db.query<{ affectedRows: number }>(REQUEUE_FAILED_SQL(table, byIds), byIds ? [ids] : [])).affectedRows;
}
