import { randomInt } from 'node:crypto';
import type { Statement } from '../db/transaction.js';
import { KEPT_COUNTS, keepCountsSql, keepRowCountSql, type KeptCount } from './sql/counters.js';

// Turns without a lane (settling only, a library claim, cancel, prune, requeue) add to one of
// these counter rows, above any lane number: they seldom meet, and never a lane's row.
const SHARDS_WITHOUT_LANE = { first: 1000, count: 16 };

/** The counter row a transaction adds to: its lane's (no two turns in flight hold a lane, so they never wait for each other's row), or a random one of those without a lane. */
export const counterShard = (lane: number | undefined): number => lane ?? SHARDS_WITHOUT_LANE.first + randomInt(SHARDS_WITHOUT_LANE.count);

/** Where a transaction adds to the kept counts: the queue's rows, in one shard. */
export interface CounterRow {
  queue: string;
  shard: number;
}

/** A statement's affected rows are jobs of this kind that now count (sign 1) or no longer count (-1) under `count`. */
export interface KeptChange {
  kind: string | null;
  count: KeptCount;
  sign: 1 | -1;
}

/** The statement that adds the affected rows of the statement just before it to a kept count. */
export const keepRowCount = (row: CounterRow, change: KeptChange): Statement => [keepRowCountSql(change.count), [row.queue, change.kind ?? '', row.shard, change.sign]];

/** Changes to the kept counts known before they are made (of rows the transaction has locked), per kind. */
export class KeptDeltas {
  private readonly byKind = new Map<string, Record<KeptCount, number>>();

  add(kind: string | null, count: KeptCount, by: number): this {
    const key = kind ?? '';
    let entry = this.byKind.get(key);
    if (entry === undefined) this.byKind.set(key, (entry = { waiting_jobs: 0, done_jobs: 0, failed_jobs: 0, cancelled_jobs: 0 }));
    entry[count] += by;
    return this;
  }

  /** The statement that adds them; none when there is nothing to add. */
  statements(row: CounterRow): Statement[] {
    const rows = [...this.byKind].filter(([, counts]) => Object.values(counts).some((by) => by !== 0));
    if (rows.length === 0) return [];
    return [[keepCountsSql(rows.length), rows.flatMap(([kind, counts]) => [row.queue, kind, row.shard, ...KEPT_COUNTS.map((count) => counts[count])])]];
  }
}
