import type { Database } from '../db/database.js';
import * as cancelSql from './sql/cancel.js';
import { counterShard, KeptDeltas } from '../claim/kept-counts.js';
import type { KeptCount } from '../claim/sql/counters.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import type { Statement } from '../db/transaction.js';

/** What {@link cancelJobs} did with each id it was given. */
export interface CancelResult {
  /** Jobs now `cancelled`: they were waiting, delayed, failed, held by a lease that ran out, or cancelled already. */
  cancelled: number[];
  /** Jobs a worker runs: marked, and cancelled by that worker within a second or two (see "Cancelling a running job" in docs/library.md). */
  cancelling: Array<{ id: number; ownerId: number | null }>;
  /** Jobs kept as done (`keepDone`, `keepResults`): nothing to cancel. */
  done: number[];
  /** No such job (never queued, or already finished and deleted). */
  unknown: number[];
}

// Locks at most this many rows per transaction: a long --ids list does not hold a big lock set.
const CHUNK = 1000;

interface LockedJob {
  id: number;
  kind: string | null;
  status: string;
  owner_id: number;
  lease_left_us: number;
  uncounted: number;
}

/** The kept count a job of this status is in before it is cancelled; none for claimed jobs (and waiting ones not counted yet). */
function countBefore(row: LockedJob): KeptCount | undefined {
  if (row.status === 'failed') return 'failed_jobs';
  if ((row.status === 'unclaimed' || row.status === 'scheduled') && Number(row.uncounted) !== 1) return 'waiting_jobs';
  return undefined;
}

/**
 * Cancels jobs by id, one transaction per chunk of ids: those nobody runs end `cancelled` at once
 * (moved between the kept counts in the same transaction), those a worker runs are marked for it.
 */
export async function cancelJobs(db: Database, table: { name: string; quoted: QuotedIdentifier }, ids: readonly number[]): Promise<CancelResult> {
  const result: CancelResult = { cancelled: [], cancelling: [], done: [], unknown: [] };
  const unique = [...new Set(ids)];
  const counters = { queue: table.name, shard: counterShard(undefined) };
  for (let start = 0; start < unique.length; start += CHUNK) {
    const chunk = unique.slice(start, start + CHUNK);
    const { found, running } = await db.transaction(async (tx) => {
      const [found] = (await tx.run([cancelSql.LOCK_JOBS_SQL(table.quoted), [chunk]])) as [LockedJob[]];
      const running = found.filter((row) => row.status === 'claimed' && Number(row.lease_left_us) > 0);
      const ending = found.filter((row) => ['unclaimed', 'scheduled', 'failed', 'claimed'].includes(row.status) && !running.includes(row));
      const moved = new KeptDeltas();
      for (const row of ending) {
        const before = countBefore(row);
        if (before !== undefined) moved.add(row.kind, before, -1);
        moved.add(row.kind, 'cancelled_jobs', 1);
      }
      const writes: Statement[] = [];
      if (ending.length > 0) writes.push([cancelSql.CANCEL_SQL(table.quoted), [ending.map((row) => Number(row.id))]], ...moved.statements(counters));
      if (running.length > 0) writes.push([cancelSql.REQUEST_CANCEL_SQL(table.quoted), [running.map((row) => Number(row.id))]]);
      if (writes.length > 0) await tx.commitWith(...writes);
      return { found, running: new Set(running.map((row) => Number(row.id))) };
    });
    const byId = new Map(found.map((row) => [Number(row.id), row]));
    for (const id of chunk) {
      const row = byId.get(id);
      if (row === undefined) result.unknown.push(id);
      else if (running.has(id)) result.cancelling.push({ id, ownerId: row.owner_id === 0 ? null : row.owner_id });
      else if (row.status === 'done') result.done.push(id);
      else result.cancelled.push(id);
    }
  }
  return result;
}
