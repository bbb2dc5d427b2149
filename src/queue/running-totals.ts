import { randomInt } from 'node:crypto';
import type { Statement } from '../db/database.js';
import type { Outcome, Settle } from './settlements.js';
import { addCountsSql } from './sql/counters.js';

// Turns without a lane (settling only, or a library claim) add to one of these rows, above any
// lane number: they seldom meet, and never a lane's row.
const SHARDS_WITHOUT_LANE = { first: 1000, count: 16 };

/**
 * The statement that adds what these settles did to the queue's running totals, into the row of
 * `lane` (or a random row of their own for turns without one); none when they complete or fail
 * nothing. It goes with the COMMIT of the turn that sends the settles: counted if and only if
 * they are.
 */
export function addToTotals(queue: string, lane: number | undefined, settles: readonly Settle[]): Statement[] {
  const byKind = new Map<string, Record<Outcome, number>>();
  for (const settle of settles) {
    for (const { kind, outcome } of settle.outcomes ?? []) {
      const key = kind ?? '';
      let counts = byKind.get(key);
      if (counts === undefined) byKind.set(key, (counts = { completed: 0, failed: 0, retried: 0 }));
      counts[outcome]++;
    }
  }
  if (byKind.size === 0) return [];
  const shard = lane ?? SHARDS_WITHOUT_LANE.first + randomInt(SHARDS_WITHOUT_LANE.count);
  return [[addCountsSql(byKind.size), [...byKind].flatMap(([kind, counts]) => [queue, kind, shard, counts.completed, counts.failed, counts.retried])]];
}
