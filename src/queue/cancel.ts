import type { Database } from '../db/database.js';
import * as cancelSql from './sql/cancel.js';
import { counterShard, KeptDeltas } from '../claim/kept-counts.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/** What {@link cancelJobs} did with each id it was given. */
export interface CancelResult {
  /** Waiting, delayed or failed jobs, now deleted. */
  cancelled: number[];
  /** Jobs a worker holds: left alone, with who holds them and for how long yet (negative: the lease ran out that long ago). */
  running: Array<{ id: number; ownerId: number | null; leaseLeftSeconds: number }>;
  /** Jobs kept as done (`keepDone`): nothing to cancel. */
  done: number[];
  /** No such job (never queued, or already finished and deleted). */
  unknown: number[];
}

// Locks at most this many rows per transaction: a long --ids list does not hold a big lock set.
const CHUNK = 1000;

/**
 * Cancels the jobs that nobody works on, reporting the others; one transaction per chunk of ids,
 * which takes the jobs it deletes off the kept counts of waiting and failed jobs.
 */
export async function cancelJobs(db: Database, table: { name: string; quoted: QuotedIdentifier }, ids: readonly number[]): Promise<CancelResult> {
  const result: CancelResult = { cancelled: [], running: [], done: [], unknown: [] };
  const unique = [...new Set(ids)];
  const counters = { queue: table.name, shard: counterShard(undefined) };
  for (let start = 0; start < unique.length; start += CHUNK) {
    const chunk = unique.slice(start, start + CHUNK);
    const rows = await db.transaction(async (tx) => {
      const [found] = (await tx.run([cancelSql.LOCK_JOBS_SQL(table.quoted), [chunk]])) as [Array<{ id: number; kind: string | null; status: string; owner_id: number; lease_left_us: number; uncounted: number }>];
      const cancellable = found.filter((row) => row.status === 'unclaimed' || row.status === 'failed');
      const gone = new KeptDeltas();
      for (const row of cancellable) if (Number(row.uncounted) !== 1) gone.add(row.kind, row.status === 'failed' ? 'failed_jobs' : 'waiting_jobs', -1);
      if (cancellable.length > 0) await tx.run([cancelSql.DELETE_CANCELLABLE_SQL(table.quoted), [cancellable.map((row) => Number(row.id))]], ...gone.statements(counters));
      return found;
    });
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    for (const id of chunk) {
      const row = byId.get(id);
      if (row === undefined) result.unknown.push(id);
      else if (row.status === 'claimed') result.running.push({ id, ownerId: row.owner_id === 0 ? null : row.owner_id, leaseLeftSeconds: Number(row.lease_left_us) / 1e6 });
      else if (row.status === 'done') result.done.push(id);
      else result.cancelled.push(id);
    }
  }
  return result;
}
