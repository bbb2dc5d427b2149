import type { Statement } from '../db/transaction.js';
import type { Outcome, PendingWrite } from './pending-writes.js';
import { addCountsSql } from './sql/counters.js';

/** What a turn's claim counts as: a claim that took jobs, one that found candidates but locked none, or neither (an idle poll). */
export type ClaimCount = 'claimed' | 'empty' | 'none';

type Counts = Record<Outcome | 'claims' | 'emptyClaims', number>;

/**
 * Counts not yet added to the queue's running totals (sql/counters.ts). A claim loop collects its
 * turns' counts here and adds them with the COMMIT of a turn about once a second: an upsert in
 * every turn cost a one-connection drain 5 % (server CPU 49 against 46 µs per job). A worker
 * that is killed loses at most that second's counts; one that stops adds the rest in its last turn.
 */
export class TotalsTally {
  private readonly byKind = new Map<string, Counts>();

  get empty(): boolean {
    return this.byKind.size === 0;
  }

  /** Adds what these settles did. */
  addSettles(settles: readonly PendingWrite[]): this {
    for (const settle of settles) for (const { kind, outcome, count } of settle.outcomes ?? []) this.countsOf(kind ?? '')[outcome] += count;
    return this;
  }

  /** Adds a turn's claim (claims have no kind: they count under ''). */
  addClaim(claim: ClaimCount): this {
    if (claim === 'none') return this;
    this.countsOf('').claims++;
    if (claim === 'empty') this.countsOf('').emptyClaims++;
    return this;
  }

  /** A copy, to add a turn's own counts to without touching this one (a transaction may run twice). */
  copy(): TotalsTally {
    const copy = new TotalsTally();
    for (const [kind, counts] of this.byKind) copy.byKind.set(kind, { ...counts });
    return copy;
  }

  clear(): void {
    this.byKind.clear();
  }

  /**
   * The statement that adds these counts to the queue's totals, into counter row `shard`
   * (kept-counts.ts, counterShard); none when there is nothing to add.
   */
  statement(queue: string, shard: number): Statement[] {
    if (this.empty) return [];
    const values = [...this.byKind].flatMap(([kind, c]) => [queue, kind, shard, c.completed, c.failed, c.retried, c.claims, c.emptyClaims]);
    return [[addCountsSql(this.byKind.size), values]];
  }

  private countsOf(kind: string): Counts {
    let counts = this.byKind.get(kind);
    if (counts === undefined) this.byKind.set(kind, (counts = { completed: 0, failed: 0, retried: 0, claims: 0, emptyClaims: 0 }));
    return counts;
  }
}
