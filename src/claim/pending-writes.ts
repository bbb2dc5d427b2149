import { fileURLToPath } from 'node:url';
import type { Statement } from '../db/transaction.js';
import type { KeptChange } from './kept-counts.js';
import type { KeptCount } from './sql/counters.js';
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
  /** The rows it changes are jobs of one kind that now count as waiting, done or failed (sql/counters.ts): added from its affected rows, in its transaction. */
  keeps?: KeptChange;
  /** It puts jobs back for later (a retry, a snooze): the first of them comes due this long after its commit. */
  dueInMs?: number;
  /** It renews the lease of the jobs (leaseRenewal). */
  renews?: true;
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

/**
 * The jobs of `ids`, split by `keyOf` (of the claim's job) into lists in the order first seen.
 * A settle that moves jobs into a kept count is one statement per kind (and outcome): its
 * affected rows are then that kind's, whichever of its jobs a lost lease took away.
 */
function splitBy(claim: Claim, ids: readonly number[], keyOf: (job: ClaimedJob) => string): Array<{ job: ClaimedJob; ids: number[] }> {
  const jobs = new Map(claim.jobs.map((job) => [job.id, job]));
  const parts = new Map<string, { job: ClaimedJob; ids: number[] }>();
  for (const id of ids) {
    const job = jobs.get(id)!;
    const key = keyOf(job);
    const part = parts.get(key);
    if (part === undefined) parts.set(key, { job, ids: [id] });
    else part.ids.push(id);
  }
  return [...parts.values()];
}

const NO_RESULTS: ReadonlyMap<number, string> = new Map();

/**
 * Deletes finished jobs, or marks them `done` with `keepDone`; those with a result in `results`
 * (JSON text, by id) are kept as `done` with it either way. One statement per kind of those kept:
 * see splitBy.
 */
export function completion(table: QuotedIdentifier, claim: Claim, ids: readonly number[], keepDone: boolean, results: ReadonlyMap<number, string> = NO_RESULTS): PendingWrite[] {
  const settle = ([sql, values]: readonly [string, unknown[]], part: readonly number[], keeps?: KeptChange): PendingWrite => ({
    statement: [sql, [...values, part, claim.token]],
    token: claim.token,
    ids: part,
    counted: true,
    outcomes: outcomesOf(claim, part, () => 'completed'),
    ...(keeps !== undefined && { keeps }),
  });
  const done = (job: ClaimedJob): KeptChange => ({ kind: job.kind, count: 'done_jobs', sign: 1 });
  const withResults = results.size === 0 ? [] : ids.filter((id) => results.has(id));
  const rest = withResults.length === 0 ? ids : ids.filter((id) => !results.has(id));
  const writes = splitBy(claim, withResults, (job) => job.kind ?? '').map(({ job, ids: part }) =>
    settle([completeSql.MARK_DONE_WITH_RESULTS_SQL(table, part.length), part.flatMap((id) => [id, results.get(id)])], part, done(job)),
  );
  if (rest.length === 0) return writes;
  if (!keepDone) return [settle([completeSql.DELETE_OWNED_SQL(table), []], rest), ...writes];
  return [...splitBy(claim, rest, (job) => job.kind ?? '').map(({ job, ids: part }) => settle([completeSql.MARK_DONE_SQL(table), []], part, done(job))), ...writes];
}

/** A statement per kind of these jobs (see splitBy), `statementOf` its part, its affected rows added to the kept count `count`. */
function perKind(claim: Claim, ids: readonly number[], statementOf: (part: number[]) => Statement, count: KeptCount): PendingWrite[] {
  return splitBy(claim, ids, (job) => job.kind ?? '').map(({ job, ids: part }) => ({
    statement: statementOf(part),
    token: claim.token,
    ids: part,
    counted: true,
    keeps: { kind: job.kind, count, sign: 1 },
  }));
}

/** Ends jobs whose cancel the worker carried out: `cancelled`. */
export const cancellation = (table: QuotedIdentifier, claim: Claim, ids: readonly number[]): PendingWrite[] =>
  perKind(claim, ids, (part) => [completeSql.CANCEL_OWNED_SQL(table), [part, claim.token]], 'cancelled_jobs');

/** Hands jobs back to the queue, due at once: they count as waiting again. */
export const handBack = (table: QuotedIdentifier, claim: Claim, ids: readonly number[]): PendingWrite[] =>
  perKind(claim, ids, (part) => [completeSql.RELEASE_OWNED_SQL(table), [part, claim.token]], 'waiting_jobs');

export interface RetryPolicy {
  maxAttempts: number;
  retryDelayMs: number;
}

/** A failure that is final whatever the job's attempts: every job has at least 0. */
export const FAIL_FOR_GOOD: RetryPolicy = { maxAttempts: 0, retryDelayMs: 0 };

/** The text kept in `last_error`: the error's message, at most 1,000 characters. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 1000);

/** Where jobq's own code is: frames of it say nothing about the handler's failure. */
const JOBQ_SOURCE = fileURLToPath(new URL('..', import.meta.url));

/** Stack frames an error keeps in `errors`: the handler's, the first few of them. */
const STACK_FRAMES = 8;

/** The first frames of the error's stack below its message, without jobq's, Node's internal ones and Promise.all's; null when it has none. */
export function stackText(error: unknown): string | null {
  if (!(error instanceof Error) || typeof error.stack !== 'string') return null;
  const frames = error.stack
    .split('\n')
    .filter((line) => /^\s+at /.test(line) && !line.includes(JOBQ_SOURCE) && !line.includes('node:internal') && !/\(index \d+\)$/.test(line))
    .slice(0, STACK_FRAMES)
    .map((line) => line.trim());
  return frames.length === 0 ? null : frames.join('\n').slice(0, 2000);
}

/**
 * Sends failed jobs back after a growing delay, or to `failed` once out of attempts, keeping the
 * error: a statement per kind and outcome (see splitBy), into the kept count of failed or of
 * waiting jobs; the SQL decides by the row's attempts, which the claim read and nobody changes
 * while the claim holds the row.
 */
export function failure(table: QuotedIdentifier, claim: Claim, ids: readonly number[], error: unknown, policy: RetryPolicy): PendingWrite[] {
  const failsForGood = (job: ClaimedJob) => job.attempts >= policy.maxAttempts;
  // As FAIL_OWNED_SQL computes it from the row's attempts, which the claim read.
  const retryInMs = (job: ClaimedJob) => Math.min(policy.retryDelayMs * 2 ** (job.attempts - 1), completeSql.MAX_RETRY_DELAY_MS);
  return splitBy(claim, ids, (job) => `${failsForGood(job) ? 'failed' : 'retried'}:${job.kind ?? ''}`).map(({ job, ids: part }) => ({
    statement: [completeSql.FAIL_OWNED_SQL(table), [policy.maxAttempts, Math.round(policy.retryDelayMs * 1000), policy.maxAttempts, errorText(error), errorText(error), stackText(error), part, claim.token]],
    token: claim.token,
    ids: part,
    counted: true,
    outcomes: outcomesOf(claim, part, (each) => (failsForGood(each) ? 'failed' : 'retried')),
    keeps: { kind: job.kind, count: failsForGood(job) ? 'failed_jobs' : 'waiting_jobs', sign: 1 } satisfies KeptChange,
    ...(!failsForGood(job) && { dueInMs: Math.min(...claim.jobs.filter((each) => part.includes(each.id)).map(retryInMs)) }),
  }));
}

/** Puts jobs off at their handler's asking: waiting again, due in `seconds`, their attempt given back. */
export const putOff = (table: QuotedIdentifier, claim: Claim, ids: readonly number[], seconds: number): PendingWrite[] =>
  perKind(claim, ids, (part) => [completeSql.SNOOZE_OWNED_SQL(table), [Math.round(seconds * 1e6), part, claim.token]], 'waiting_jobs').map((write) => ({ ...write, dueInMs: seconds * 1000 }));

/** Pushes the lease end of jobs still held to `leaseSeconds` from now. */
export function leaseRenewal(table: QuotedIdentifier, claim: Claim, ids: readonly number[], leaseSeconds: number): PendingWrite {
  return { statement: [completeSql.EXTEND_LEASE_SQL(table), [Math.round(leaseSeconds * 1e6), ids, claim.token]], token: claim.token, ids, counted: false, renews: true };
}
