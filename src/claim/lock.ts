import type { Statement, Transaction } from '../db/transaction.js';
import { DEFAULTS } from '../config/defaults.js';
import { keepNoLessUrgentThanSkipped, type Candidate } from './candidate-order.js';
import { withinKindRules, type KindRules } from './kind-rules.js';
import { KeptDeltas, type CounterRow } from './kept-counts.js';
import * as claimSql from './sql/claim.js';
import type { ClaimedJob } from './types.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/** A row as the locking reads return it: JSON columns as text, and whether the job was waiting (not claimed before, its lease run out). */
export type LockedRow = Omit<ClaimedJob, 'payload' | 'traceContext' | 'cancelRequested'> & { payload: string | null; traceContext: string | null; cancelRequested: number; waiting: number };

/** What the locking read of a claim turn came to. */
export interface Locked {
  /** Jobs to mark claimed, in the order they were chosen (see Claim.jobs). */
  jobs: ClaimedJob[];
  /** Jobs whose lease ran out once too often: they go to `failed` instead. */
  exhausted: Array<{ id: number; kind: string | null }>;
  /** How the claim changes the kept counts: the waiting jobs it takes, the exhausted jobs it fails. */
  kept: KeptDeltas;
  /** Candidates, less the locked jobs of kinds paused or limited since the candidates were read. */
  candidates: number;
}

/**
 * The second round trip: locks the candidates nobody else holds (FOR UPDATE SKIP LOCKED, by
 * primary key) and keeps those the claim may take, as lockedCandidates does.
 */
export async function lockCandidates(tx: Transaction, table: QuotedIdentifier, found: readonly Candidate[], rules: KindRules | undefined, apart: ReadonlySet<number>): Promise<Locked> {
  const [rows] = await tx.run([claimSql.LOCK_CANDIDATES_SQL(table), [found.map((candidate) => candidate.id)]]);
  return lockedCandidates(rows as LockedRow[], found, rules, apart);
}

/**
 * Of the candidates the claim locked (by primary key, or by the first round trip's locking read:
 * lockedAmong), those it keeps. A kind paused or limited since the candidates were read: its jobs
 * stay waiting (their locks end with the COMMIT) and do not count as candidates, or the loop would
 * retry at once, and again; of a limited or grouped kind, those its own read took (`apart`,
 * kinds-apart.ts) are kept.
 */
export function lockedCandidates(lockedJobs: readonly LockedRow[], found: readonly Candidate[], rules: KindRules | undefined, apart: ReadonlySet<number>): Locked {
  const kept = rules === undefined ? lockedJobs : withinKindRules(lockedJobs, rules, apart);
  return { ...takeLocked(keepNoLessUrgentThanSkipped(found, kept), found), candidates: found.length - (lockedJobs.length - kept.length) };
}

/**
 * The candidates among the jobs the first round trip's locking read locked (sql/claim.ts,
 * candidatesLocked): it may hold jobs that are no candidates, which stay waiting (their locks end
 * with the COMMIT).
 */
export function lockedAmong(rows: readonly LockedRow[], found: readonly Candidate[]): LockedRow[] {
  const wanted = new Set(found.map((candidate) => candidate.id));
  return rows.filter((row) => wanted.has(row.id));
}

/**
 * The third round trip's writes, before the COMMIT: exhausted jobs to `failed`, the changes to the
 * kept counts (the rows are locked, so all of them change), the others claimed under the token.
 * The claim's UPDATE comes last.
 */
export function markStatements(table: QuotedIdentifier, locked: Locked, claim: { ownerId: number; token: Buffer; leaseMicroseconds: number }, counters: CounterRow | undefined): Statement[] {
  if (counters === undefined) throw new Error('a claim changes the kept counts: it needs the queue they belong to (request.totals)');
  const writes: Statement[] = [];
  if (locked.exhausted.length > 0) writes.push([claimSql.MARK_FAILED_SQL(table), [LEASES_RAN_OUT, locked.exhausted.map((job) => job.id)]]);
  writes.push(...locked.kept.statements(counters));
  if (locked.jobs.length > 0) {
    writes.push([claimSql.MARK_CLAIMED_SQL(table), [claim.ownerId, claim.token, claim.leaseMicroseconds, locked.jobs.map((job) => job.id)]]);
  }
  return writes;
}

const LEASES_RAN_OUT =
  `its lease ran out ${DEFAULTS.maxLeaseExpiries} times in a row without a worker settling it: ` +
  'each worker that held it died, hung or was stopped hard while it ran (does it crash its process?)';

/**
 * Of the locked jobs, those whose lease ran out once too often, and those to claim: all the
 * others, unless one of them has had a lease run out (a suspect: it may crash its worker), which
 * is then claimed alone. The rest stay waiting: their locks end with the COMMIT. The jobs come in
 * the order of the candidates: a worker starts jobs of one priority in that order, which for a
 * kind shared between groups is their round-robin.
 */
function takeLocked(locked: ReadonlyArray<LockedRow>, found: readonly Candidate[]): Omit<Locked, 'candidates'> {
  const exhausted = locked.filter((job) => job.leaseExpiries >= DEFAULTS.maxLeaseExpiries);
  const runnable = locked.filter((job) => job.leaseExpiries < DEFAULTS.maxLeaseExpiries);
  const suspect = runnable.find((job) => job.leaseExpiries > 0);
  const taken = suspect === undefined ? runnable : [suspect];
  const kept = new KeptDeltas();
  for (const job of exhausted) kept.add(job.kind, 'failed_jobs', 1);
  for (const job of [...exhausted, ...taken]) if (Number(job.waiting) === 1) kept.add(job.kind, 'waiting_jobs', -1);
  const position = new Map(found.map((candidate, i) => [candidate.id, i]));
  const jobs = taken
    .map(({ waiting: _, ...job }) => ({ ...job, payload: parseJson(job.payload), traceContext: parseJson(job.traceContext), cancelRequested: Number(job.cancelRequested) === 1 }))
    .sort((a, b) => position.get(a.id)! - position.get(b.id)!);
  return { exhausted: exhausted.map(({ id, kind }) => ({ id, kind })), jobs, kept };
}

const parseJson = (text: string | null) => (text === null ? null : JSON.parse(text));
