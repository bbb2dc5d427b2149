import { randomBytes } from 'node:crypto';
import type { Database, Statement } from '../db/database.js';
import { ExitCode, JobqError } from '../errors.js';
import { randomPrefixPattern } from './demo-jobs.js';
import * as claimSql from './sql/claim.js';
import * as completeSql from './sql/complete.js';
import { MAX_BATCH_SIZE, type Claim, type ClaimedJob, type ClaimOptions, type Settlement } from './types.js';

const DEFAULT_LEASE_SECONDS = 60;
export const DEFAULT_MAX_ATTEMPTS = 5;
const DEFAULT_STEAL_AFTER_MS = 50;

/** The previous claim of a consumer, to be settled by `sql` (params: [ids], token) in the same commit. */
export interface PendingSettlement {
  claim: Claim;
  sql: string;
}

/**
 * One turn of the consumer loop, settling the previous claim first when there is one:
 *   1. [START TRANSACTION; settle previous;] candidates    (autocommit when nothing to settle)
 *   2. [START TRANSACTION;] lock candidates FOR UPDATE SKIP LOCKED
 *   3. mark failed; mark claimed; COMMIT
 * Three round trips and one commit per batch, where the article used six and two. The candidate
 * read takes no locks at READ COMMITTED, inside the transaction or not.
 */
export async function claimCycle(
  db: Database,
  table: string,
  previous: PendingSettlement | undefined,
  options: ClaimOptions,
): Promise<{ settlement: Settlement; claim: Claim }> {
  const batchSize = checkBatchSize(options.batchSize);
  checkLane(options.lane);
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const leaseMicroseconds = Math.round((options.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1e6);
  const candidates = candidatesStatement(table, options, batchSize);
  const owned = previous?.claim.jobs.map((job) => job.id) ?? [];
  // One token for every attempt, and what the last attempt sent with its COMMIT: if the connection
  // broke during that COMMIT, its outcome is unknown, and the next attempt looks for its own rows
  // instead of leaving them stranded until their lease runs out.
  const token = randomBytes(16);
  let committing: Claim | undefined;
  const reconnectsAtStart = db.counters.reconnects;
  return db.transaction(async (tx) => {
    const resumed = db.counters.reconnects !== reconnectsAtStart;
    if (resumed && committing !== undefined && committing.jobs.length > 0) {
      const mine = await db.query<Array<{ id: number }>>(claimSql.OWNED_BY_TOKEN_SQL(table), [committing.jobs.map((job) => job.id), token]);
      if (mine.length > 0) {
        const ids = new Set(mine.map((row) => Number(row.id)));
        const settlement = await settlementAfterReconnect(db, table, owned, previous);
        return { settlement, claim: { ...committing, jobs: committing.jobs.filter((job) => ids.has(job.id)) } };
      }
    }
    let settled = 0;
    let found: Array<{ id: number }>;
    if (previous !== undefined && owned.length > 0) {
      const [result, rows] = await tx.run([previous.sql, [owned, previous.claim.token]], candidates);
      settled = (result as { affectedRows: number }).affectedRows;
      found = rows as Array<{ id: number }>;
    } else {
      found = await db.query<Array<{ id: number }>>(candidates[0], [...(candidates[1] ?? [])]);
    }
    if (found.length === 0) found = await findStale(db, table, options, batchSize);
    const settlement = resumed ? await settlementAfterReconnect(db, table, owned, previous) : { settled, lost: owned.length - settled };
    const empty = (candidateCount: number) => ({ settlement, claim: { token, jobs: [], candidates: candidateCount, failedIds: [] } });
    if (found.length === 0) return empty(0);
    const [lockedRows] = await tx.run([claimSql.LOCK_CANDIDATES_SQL(table), [found.map((row) => row.id)]]);
    const locked = lockedRows as ClaimedJob[];
    if (locked.length === 0) return empty(found.length);
    const exhausted = locked.filter((job) => job.attempts >= maxAttempts).map((job) => job.id);
    const jobs = locked
      .filter((job) => job.attempts < maxAttempts)
      .map((job) => ({ ...job, payload: parsePayload(job.payload), attempts: job.attempts + 1 }))
      .sort((a, b) => a.id - b.id);
    const writes: Statement[] = [];
    if (exhausted.length > 0) writes.push([claimSql.MARK_FAILED_SQL(table), [exhausted]]);
    if (jobs.length > 0) {
      writes.push([claimSql.MARK_CLAIMED_SQL(table), [options.ownerId ?? 0, token, leaseMicroseconds, jobs.map((job) => job.id)]]);
    }
    committing = { token, jobs, candidates: found.length, failedIds: exhausted };
    await tx.commitWith(...writes);
    return { settlement, claim: committing };
  });
}

/**
 * What settling `previous` came to when a reconnect happened on the way: the statement may have
 * been committed by the lost attempt (and so changed nothing the second time), so count instead
 * the rows someone else holds now; the rest were settled by us.
 */
export async function settlementAfterReconnect(db: Database, table: string, ids: readonly number[], previous: { claim: Claim } | undefined): Promise<Settlement> {
  if (previous === undefined || ids.length === 0) return { settled: 0, lost: 0 };
  const [row] = await db.query<Array<{ others: number }>>(completeSql.HELD_BY_OTHERS_SQL(table), [ids, previous.claim.token]);
  const lost = Number(row?.others ?? 0);
  return { settled: ids.length - lost, lost };
}

function candidatesStatement(table: string, options: ClaimOptions, limit: number): Statement {
  const { count, index } = options.lane ?? { count: 1, index: 0 };
  if (options.kind !== undefined) {
    const kind = options.kind;
    return [claimSql.candidatesOldestSql(table, true), [kind, limit, kind, count, index, limit, limit]];
  }
  return options.pick === 'random-prefix'
    ? [claimSql.candidatesPrefixSql(table), [limit, randomPrefixPattern(), count, index, limit, count, index, limit, limit]]
    : [claimSql.candidatesOldestSql(table, false), [limit, count, index, limit, limit]];
}

/** Other lanes' jobs that have waited too long; none when there is only one lane. */
async function findStale(db: Database, table: string, options: ClaimOptions, limit: number): Promise<Array<{ id: number }>> {
  if (options.lane === undefined || options.lane.count <= 1) return [];
  const stealAfterMicroseconds = Math.round((options.lane.stealAfterMs ?? DEFAULT_STEAL_AFTER_MS) * 1000);
  const byKind = options.kind !== undefined;
  const values = [...(byKind ? [options.kind] : []), stealAfterMicroseconds, limit];
  return db.query<Array<{ id: number }>>(claimSql.candidatesStaleSql(table, byKind), values);
}

function parsePayload(payload: unknown): unknown {
  return payload === null ? null : JSON.parse(String(payload));
}

function checkBatchSize(batchSize: number): number {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw new JobqError(`batch size must be a whole number from 1 to ${MAX_BATCH_SIZE}, not ${batchSize}`, ExitCode.usage);
  }
  return batchSize;
}

function checkLane(lane: ClaimOptions['lane']): void {
  if (lane === undefined) return;
  if (!Number.isInteger(lane.count) || lane.count < 1 || !Number.isInteger(lane.index) || lane.index < 0 || lane.index >= lane.count) {
    throw new JobqError(`lane must have a whole count >= 1 and an index from 0 to count - 1, not ${JSON.stringify(lane)}`, ExitCode.usage);
  }
}
