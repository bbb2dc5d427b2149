import type { Statement } from '../db/transaction.js';
import * as completeSql from './sql/complete.js';
import type { Claim, ClaimedJob } from './types.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/**
 * A statement that ends (or extends) some of one claim's jobs, to be sent in the next claim turn's
 * first round trip. Each names its rows by id and by the claim's token, so it changes nothing on
 * jobs the claim no longer owns, and is safe to send again after a lost connection.
 */
export interface PendingWrite {
  statement: Statement;
  token: Buffer;
  ids: readonly number[];
  /** Counts as settling the jobs (complete, fail, release); lease renewals do not. */
  counted: boolean;
  /** How many jobs came to which outcome, per kind, for the running totals (sql/counters.ts); releases and renewals add nothing. */
  outcomes?: ReadonlyArray<{ kind: string | null; outcome: Outcome; count: number }>;
}

export type Outcome = 'completed' | 'failed' | 'retried';

/** How many of these jobs of a claim came to each outcome, per kind. */
function outcomesOf(claim: Claim, ids: readonly number[], outcomeOf: (job: ClaimedJob) => Outcome): NonNullable<PendingWrite['outcomes']> {
  const settled = new Set(ids);
  const counts = new Map<string, { kind: string | null; outcome: Outcome; count: number }>();
  for (const job of claim.jobs) {
    if (!settled.has(job.id)) continue;
    const outcome = outcomeOf(job);
    const key = `${outcome}:${job.kind ?? ''}`;
    const entry = counts.get(key);
    if (entry === undefined) counts.set(key, { kind: job.kind, outcome, count: 1 });
    else entry.count++;
  }
  return [...counts.values()];
}

/** Deletes finished jobs, or marks them `done` with `keepDone`. */
export function completion(table: QuotedIdentifier, claim: Claim, ids: readonly number[], keepDone: boolean): PendingWrite {
  const sql = (keepDone ? completeSql.MARK_DONE_SQL : completeSql.DELETE_OWNED_SQL)(table);
  return { statement: [sql, [ids, claim.token]], token: claim.token, ids, counted: true, outcomes: outcomesOf(claim, ids, () => 'completed') };
}

/** Hands jobs back to the queue, due at once. */
export function handBack(table: QuotedIdentifier, claim: Claim, ids: readonly number[]): PendingWrite {
  return { statement: [completeSql.RELEASE_OWNED_SQL(table), [ids, claim.token]], token: claim.token, ids, counted: true };
}

export interface RetryPolicy {
  maxAttempts: number;
  retryDelayMs: number;
}

/** The text kept in `last_error`: the error's message, at most 1,000 characters. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 1000);

/** Sends failed jobs back after a growing delay, or to `failed` once out of attempts, keeping the error. */
export function failure(table: QuotedIdentifier, claim: Claim, ids: readonly number[], error: unknown, policy: RetryPolicy): PendingWrite {
  const values = [policy.maxAttempts, policy.maxAttempts, Math.round(policy.retryDelayMs * 1000), errorText(error), ids, claim.token];
  const outcomes = outcomesOf(claim, ids, (job) => (job.attempts >= policy.maxAttempts ? 'failed' : 'retried'));
  return { statement: [completeSql.FAIL_OWNED_SQL(table), values], token: claim.token, ids, counted: true, outcomes };
}

/** Pushes the lease end of jobs still held to `leaseSeconds` from now. */
export function leaseRenewal(table: QuotedIdentifier, claim: Claim, ids: readonly number[], leaseSeconds: number): PendingWrite {
  return { statement: [completeSql.EXTEND_LEASE_SQL(table), [Math.round(leaseSeconds * 1e6), ids, claim.token]], token: claim.token, ids, counted: false };
}
