import { randomInt } from 'node:crypto';
import type { Statement } from '../db/database.js';
import type { Outcome, Settle } from './settlements.js';
import { addCountsSql } from './sql/counters.js';

// Turns without a lane (settling only, or a library claim) add to one of these rows, above any
// lane number: they seldom meet, and never a lane's row.
const SHARDS_WITHOUT_LANE = { first: 1000, count: 16 };

/**
 * The statement that adds what these settles did, and the turn's claim, to the queue's running
 * totals, into the row of `lane` (or a random row of their own for turns without one); none when
 * there is nothing to add. It goes with the COMMIT of the turn that sends the settles: counted if
 * and only if they are.
 */
export function addToTotals(queue: string, lane: number | undefined, settles: readonly Settle[], claim: ClaimCount = 'none'): Statement[] {
  type Counts = Record<Outcome | 'claims' | 'emptyClaims', number>;
  const byKind = new Map<string, Counts>();
  const countsOf = (kind: string) => {
    let counts = byKind.get(kind);
    if (counts === undefined) byKind.set(kind, (counts = { completed: 0, failed: 0, retried: 0, claims: 0, emptyClaims: 0 }));
    return counts;
  };
  for (const settle of settles) for (const { kind, outcome } of settle.outcomes ?? []) countsOf(kind ?? '')[outcome]++;
  if (claim !== 'none') {
    countsOf('').claims++;
    if (claim === 'empty') countsOf('').emptyClaims++;
  }
  if (byKind.size === 0) return [];
  const shard = lane ?? SHARDS_WITHOUT_LANE.first + randomInt(SHARDS_WITHOUT_LANE.count);
  const values = [...byKind].flatMap(([kind, c]) => [queue, kind, shard, c.completed, c.failed, c.retried, c.claims, c.emptyClaims]);
  return [[addCountsSql(byKind.size), values]];
}

/** What a turn's claim counts as: a claim that took jobs, one that found candidates but locked none, or neither (an idle poll). */
export type ClaimCount = 'claimed' | 'empty' | 'none';
