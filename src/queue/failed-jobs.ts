import type { QuotedIdentifier } from '../config/identifiers.js';
import type { Database } from '../db/database.js';
import { REQUEUE_FAILED_SQL } from '../claim/sql/complete.js';
import { FAILED_PAGE_SQL, LOCK_FAILED_BEFORE_SQL, LOCK_FAILED_SQL } from './sql/failed-jobs.js';
import { counterShard, KeptDeltas } from '../claim/kept-counts.js';
import type { Statement } from '../db/transaction.js';
import { isDuplicateKey } from '../db/server-errors.js';
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

// Locks at most this many rows per transaction: requeueing a million failed jobs holds no big lock set.
const CHUNK = 1000;
/** Tries of a chunk whose jobs' unique keys keep being taken before that is an error. */
const KEY_TAKEN_ATTEMPTS = 10;

/**
 * Puts failed jobs (all that failed before it began, or those with these ids) back to
 * `unclaimed` with fresh attempts, one transaction per chunk; how many.
 */
export async function requeueFailedJobs(db: Database, table: { name: string; quoted: QuotedIdentifier }, ids?: readonly number[]): Promise<number> {
  const counters = { queue: table.name, shard: counterShard(undefined) };
  const requeueOnce = (lock: Statement) =>
    db.transaction(async (tx) => {
      const [locked] = (await tx.run(lock)) as [Array<{ id: number; kind: string | null }>];
      if (locked.length === 0) return 0;
      const moved = new KeptDeltas();
      for (const row of locked) moved.add(row.kind, 'failed_jobs', -1).add(row.kind, 'waiting_jobs', 1);
      await tx.commitWith([REQUEUE_FAILED_SQL(table.quoted), [locked.map((row) => row.id)]], ...moved.statements(counters));
      return locked.length;
    });
  // A unique key taken between a chunk's lock and its UPDATE (sql/failed-jobs.ts): locked again, without that job.
  const requeueChunk = async (lock: Statement): Promise<number> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await requeueOnce(lock);
      } catch (error) {
        if (!isDuplicateKey(error) || attempt === KEY_TAKEN_ATTEMPTS) throw error;
      }
    }
  };
  let requeued = 0;
  if (ids !== undefined) {
    for (let start = 0; start < ids.length; start += CHUNK) requeued += await requeueChunk([LOCK_FAILED_SQL(table.quoted), [ids.slice(start, start + CHUNK)]]);
    return requeued;
  }
  const [{ now }] = await db.query<Array<{ now: Date | string }>>('SELECT NOW(6) AS now');
  for (;;) {
    const chunk = await requeueChunk([LOCK_FAILED_BEFORE_SQL(table.quoted), [now, CHUNK]]);
    requeued += chunk;
    if (chunk < CHUNK) return requeued;
  }
}
