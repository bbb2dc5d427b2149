import { randomBytes } from 'node:crypto';
import type { QuotedIdentifier } from '../config/identifiers.js';
import type { Statement } from '../db/transaction.js';
import { indexKeyOf, type JobRow } from './new-jobs.js';
import { COUNT_NEW_JOBS_BY_MARKER_SQL, countNewJobsSql, DELETE_NEW_JOBS_SQL, LOCK_NEW_JOBS_SQL } from './sql/new-jobs.js';
import type { Database } from '../db/database.js';
import { counterShard, KeptDeltas } from '../claim/kept-counts.js';

/** An insert's marker: random, a new one for each time the rows are sent. */
export const newMarker = (): Buffer => randomBytes(16);

/** The marker of rows counted from the insert's own list: the default claim token. */
export const UNMARKED = Buffer.alloc(16);

/** jobq_new_jobs as the queue's own connection names it. */
export const NEW_JOBS_TABLE = 'jobq_new_jobs';

/**
 * The statement that adds the jobs an insert made to the queue's waiting count, sent after the
 * insert in its transaction (sql/new-jobs.ts). `keysFree`: none of the rows' keys can be held by
 * a job already, and their number is counted from the rows; otherwise the rows that carry the
 * insert's `marker` are counted, at the cost of a read of each key (half again a thousand-row
 * insert's time: bench-results/README.md).
 */
export function countNewJobs(target: { queue: string; jobs: QuotedIdentifier; newJobs: string }, rows: readonly JobRow[], keysFree: boolean, marker: Buffer): Statement {
  if (!keysFree) return [COUNT_NEW_JOBS_BY_MARKER_SQL(target.newJobs, target.jobs), [target.queue, rows.map(indexKeyOf), marker]];
  const byKind = new Map<string, number>();
  for (const row of rows) byKind.set(row[1] ?? '', (byKind.get(row[1] ?? '') ?? 0) + 1);
  return [countNewJobsSql(target.newJobs, byKind.size), [...byKind].flatMap(([kind, jobs]) => [target.queue, kind, jobs])];
}

/** Rows of new jobs a fold takes per transaction. */
const FOLD_CHUNK = 5000;

/**
 * Adds the queue's rows of new jobs into its kept counts and deletes them, a chunk per
 * transaction, skipping those an enqueue or another fold holds (a recount waits for them). The
 * rows are locked before the counter row, in the order a recount takes them.
 */
export async function foldNewJobs(db: Database, queue: string): Promise<void> {
  for (;;) {
    const folded = await db.transaction(async (tx) => {
      const [rows] = (await tx.run([LOCK_NEW_JOBS_SQL, [queue, FOLD_CHUNK]])) as [Array<{ id: number; kind: string; jobs: number }>];
      if (rows.length === 0) return 0;
      const waiting = new KeptDeltas();
      for (const row of rows) waiting.add(row.kind, 'waiting_jobs', Number(row.jobs));
      await tx.commitWith(...waiting.statements({ queue, shard: counterShard(undefined) }), [DELETE_NEW_JOBS_SQL, [queue, rows.map((row) => row.id)]]);
      return rows.length;
    });
    if (folded < FOLD_CHUNK) return;
  }
}
