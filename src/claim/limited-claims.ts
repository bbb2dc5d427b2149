import type { Statement, Transaction } from '../db/transaction.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import { orderCandidates, type Candidate } from './candidate-order.js';
import { limitedKinds, type KindRules } from './kind-rules.js';
import * as claimSql from './sql/claim.js';
import type { CandidateRow } from './sql/claim.js';
import * as limitSql from './sql/limits.js';
import type { ClaimOptions } from './types.js';

/** The candidates a claim turn may take of its limited kinds, and how to mark their limits taken. */
export interface UnderLimits {
  candidates: Candidate[];
  /** The ids among them, for the lock to keep (kind-rules.ts, withinKindRules). */
  ids: ReadonlySet<number>;
}

const NONE: UnderLimits = { candidates: [], ids: new Set() };

/**
 * Of the limited kinds the claim may take under the rules it saw (kind-rules.ts, limitedKinds):
 * locks the limit rows no other claim holds and counts each kind's running jobs (one round trip),
 * then reads up to the room under each limit of the kind's due jobs, expired leases first, then by
 * priority and age (a second, only when there is room). At most `room` in all. The rows stay
 * locked to the COMMIT.
 */
export async function candidatesUnderLimits(tx: Transaction, table: QuotedIdentifier, claim: ClaimOptions, rules: KindRules | undefined, room: number): Promise<UnderLimits> {
  const kinds = limitedKinds(claim, rules);
  if (rules === undefined || kinds.length === 0 || room <= 0) return NONE;
  const [locked, counted] = (await tx.run([limitSql.LOCK_LIMITS_SQL, [rules.queue, kinds]], [limitSql.COUNT_RUNNING_SQL(table), [kinds]])) as [
    Array<{ kind: string; concurrency: number }>,
    Array<{ kind: string; running: number }>,
  ];
  const running = new Map(counted.map((row) => [row.kind, Number(row.running)]));
  let left = room;
  const allowed: Array<{ kind: string; take: number }> = [];
  for (const { kind, concurrency } of locked) {
    const take = Math.min(left, Number(concurrency) - (running.get(kind) ?? 0));
    if (take <= 0) continue;
    allowed.push({ kind, take });
    left -= take;
  }
  if (allowed.length === 0) return NONE;
  const reads = allowed.map(({ kind, take }): Statement => claimSql.candidatesOldest(table, { kinds: [kind] }, undefined, take));
  const results = (await tx.run(...reads)) as CandidateRow[][];
  const candidates = allowed.flatMap(({ take }, i) => orderCandidates(results[i]!, take));
  return { candidates, ids: new Set(candidates.map((candidate) => candidate.id)) };
}

/**
 * The write that marks the limit rows of the kinds a claim took jobs of under their limits, of the
 * jobs it locked (on Galera, what makes two nodes' claims conflict).
 */
export function touchLimits(rules: KindRules | undefined, locked: ReadonlyArray<{ id: number; kind: string | null }>, underLimit: ReadonlySet<number>): Statement[] {
  if (rules === undefined || underLimit.size === 0) return [];
  const kinds = new Set(locked.filter((job) => underLimit.has(job.id)).map((job) => job.kind!));
  return kinds.size === 0 ? [] : [[limitSql.TOUCH_LIMITS_SQL, [rules.queue, [...kinds]]]];
}
