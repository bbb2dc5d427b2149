import { randomBytes } from 'node:crypto';
import type { Database } from '../db/database.js';
import type { Statement, Transaction } from '../db/transaction.js';
import { WriteConflictError } from '../db/server-errors.js';
import type { ClaimCount } from './running-totals.js';
import { counterShard, keepRowCount, type CounterRow } from './kept-counts.js';
import type { PendingWrite } from './pending-writes.js';
import * as claimSql from './sql/claim.js';
import * as completeSql from './sql/complete.js';
import type { SettleRequest } from './turn-request.js';
import type { Claim, ClaimedJob, Settlement } from './types.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/**
 * The committing side of one turn, across the attempts of its transaction (a deadlock or a lost
 * connection runs the transaction again): the claim's token, the settles and running totals that
 * go with the COMMIT, and what the last attempt sent with its COMMIT. If the connection broke
 * during that COMMIT, its outcome is unknown, and the next attempt looks for its own rows instead
 * of leaving them stranded until their lease runs out.
 */
export class TurnCommit {
  readonly token = randomBytes(16);
  readonly settles: readonly PendingWrite[];
  /** The running totals go with the COMMIT: a counter row is held for the last round trip only. */
  readonly totalsAdded: boolean;
  private readonly reconnectsAtStart: number;
  private committing: { claim: Claim; claimCount: ClaimCount } | undefined;

  constructor(
    private readonly db: Database,
    private readonly table: QuotedIdentifier,
    private readonly request: SettleRequest,
  ) {
    this.settles = request.settle ?? [];
    this.totalsAdded = request.totals?.flush === true;
    this.reconnectsAtStart = db.counters.reconnects;
  }

  /** The connection was lost and made again since the turn began: some attempt may have committed. */
  get reconnected(): boolean {
    return this.db.counters.reconnects !== this.reconnectsAtStart;
  }

  /** The claim an earlier attempt committed before its connection broke, if it did; its jobs still ours. */
  async committedBefore(): Promise<{ claim: Claim; claimCount: ClaimCount; settlement: Settlement } | undefined> {
    const before = this.committing;
    if (!this.reconnected || before === undefined || before.claim.jobs.length === 0) return undefined;
    const mine = await this.db.query<Array<{ id: number }>>(claimSql.HELD_BY_TOKENS_SQL(this.table), [before.claim.jobs.map((job) => job.id), [this.token]]);
    if (mine.length === 0) return undefined;
    const ids = new Set(mine.map((row) => Number(row.id)));
    return { ...before, claim: { ...before.claim, jobs: before.claim.jobs.filter((job) => ids.has(job.id)) }, settlement: await this.settlement([]) };
  }

  /** What the settles came to, from their results (or, after a reconnect, from the rows). */
  async settlement(results: readonly unknown[]): Promise<Settlement> {
    return this.reconnected ? settlementAfterReconnect(this.db, this.table, this.settles) : tally(this.settles, results);
  }

  /**
   * Commits the turn: the claim's `writes`, then the settles and the running totals, in the round
   * trip of the COMMIT. The settles go last so that the rows they lock (a job whose lease they
   * renew, above all) are never held across round trips: a worker frozen in the middle of a turn
   * (SIGSTOP, a paused VM) would otherwise keep a running job from every other worker after its
   * lease ran out. Returns the claimed jobs that are this claim's after the COMMIT, and what the
   * settles came to.
   */
  async commit<J extends ClaimedJob>(
    tx: Transaction,
    counters: CounterRow | undefined,
    claimCount: ClaimCount,
    claim?: { jobs: J[]; writes: Statement[]; failedIds: number[]; candidates: number },
  ): Promise<{ jobs: J[]; settlement: Settlement }> {
    const jobs = claim?.jobs ?? [];
    if (claim !== undefined) this.committing = { claim: { token: this.token, jobs, candidates: claim.candidates, failedIds: claim.failedIds }, claimCount };
    const writes = claim?.writes ?? [];
    const settles = this.settleWrites(counters);
    const statements = [...writes, ...settles.statements, ...this.totalsStatements(counters, claimCount)];
    const committed = await commitTurn(this.db, tx, this.table, statements, this.settles, { token: this.token, jobs });
    return { jobs: committed.jobs, settlement: await this.settlement(settles.resultsOfSettles(committed.results.slice(writes.length))) };
  }

  /** The counter row this turn adds to, in `lane` or in a row of turns without one; none for a turn that keeps no counts. */
  counterRow(lane: number | undefined): CounterRow | undefined {
    const queue = this.request.totals?.queue;
    return queue === undefined ? undefined : { queue, shard: counterShard(lane) };
  }

  /**
   * Commits a turn that claims nothing in one round trip: its settles and the totals (nothing to
   * send, no transaction, when it has neither). Returns what the settles came to.
   */
  async commitSettles(db: Database): Promise<Settlement> {
    const counters = this.counterRow(undefined);
    const settles = this.settleWrites(counters);
    const statements = [...settles.statements, ...this.totalsStatements(counters, 'none')];
    if (statements.length === 0) return { settled: 0, lost: 0 };
    const results = await db.transaction(async (tx) => (await commitTurn(this.db, tx, this.table, statements, this.settles)).results);
    return this.settlement(settles.resultsOfSettles(results));
  }

  /**
   * The settle statements, each followed by the statement that adds its affected rows to a kept
   * count where it changes one (ROW_COUNT() reads the statement just before); and how to find
   * each settle's own result among theirs.
   */
  private settleWrites(counters: CounterRow | undefined): { statements: Statement[]; resultsOfSettles: (results: readonly unknown[]) => unknown[] } {
    const statements: Statement[] = [];
    const positions: number[] = [];
    for (const settle of this.settles) {
      positions.push(statements.length);
      statements.push(settle.statement);
      if (settle.keeps === undefined) continue;
      if (counters === undefined) throw new Error('a settle that changes the kept counts needs the queue they belong to (request.totals)');
      statements.push(keepRowCount(counters, settle.keeps));
    }
    return { statements, resultsOfSettles: (results) => positions.map((i) => results[i]) };
  }

  private totalsStatements(counters: CounterRow | undefined, claim: ClaimCount): Statement[] {
    const totals = this.request.totals;
    return totals?.flush === true && counters !== undefined ? totals.pending.copy().addSettles(this.settles).addClaim(claim).statement(totals.queue, counters.shard) : [];
  }
}

/**
 * A turn's COMMIT; returns the statements' results and the claimed jobs that are this claim's.
 * On a Galera node the COMMIT is followed, in the same round trip, by a read of the rows the turn
 * settled and claimed. With a node SIGKILLed mid-run, a surviving node was seen to answer OK to
 * such a COMMIT whose changes never appeared: its claimed jobs went to other consumers and its
 * settled jobs stayed claimed until their lease ran out (2 runs of the node-loss test in 16). So
 * on Galera a turn believes the read, not the OK: a settled row still held by its claim means the
 * transaction did not happen, and the turn runs again (settles are idempotent by token); a claimed
 * row held by another token went to another claim after this one, and is not this claim's.
 */
async function commitTurn<J extends ClaimedJob>(
  db: Database,
  tx: Transaction,
  table: QuotedIdentifier,
  statements: Statement[],
  settles: readonly PendingWrite[],
  claim?: { token: Buffer; jobs: J[] },
): Promise<{ results: unknown[]; jobs: J[] }> {
  const claimed = claim?.jobs ?? [];
  const settled = settles.filter((settle) => settle.counted && settle.ids.length > 0);
  const ids = [...settled.flatMap((settle) => settle.ids), ...claimed.map((job) => job.id)];
  if (db.galera === undefined || ids.length === 0) return { results: await tx.commitWith(...statements), jobs: claimed };
  const tokens = [...settled.map((settle) => settle.token), ...(claim === undefined ? [] : [claim.token])];
  const { results, read } = await tx.commitThenRead(statements, [claimSql.HELD_BY_TOKENS_SQL(table), [ids, tokens]]);
  const rows = read as Array<{ id: number; claim_token: Buffer }>;
  if (rows.some((row) => claim === undefined || !claim.token.equals(row.claim_token))) {
    throw new WriteConflictError('the COMMIT answered OK, but the rows it settled are still claimed');
  }
  if (claimed.length > 0 && rows.length === 0) throw new WriteConflictError('the COMMIT answered OK, but none of the jobs it claimed are held');
  const held = new Set(rows.map((row) => Number(row.id)));
  return { results, jobs: claimed.filter((job) => held.has(job.id)) };
}

/**
 * Settled and lost jobs, from the settle statements' affected-row counts; and the claims a lease
 * renewal did not renew every job of (the server changes a renewed row's lease end every time).
 */
function tally(settles: readonly PendingWrite[], results: readonly unknown[]): Settlement {
  let settled = 0;
  let owned = 0;
  const unrenewed: Buffer[] = [];
  settles.forEach((settle, i) => {
    const { affectedRows } = results[i] as { affectedRows: number };
    if (settle.renews === true && affectedRows < settle.ids.length) unrenewed.push(settle.token);
    if (!settle.counted) return;
    owned += settle.ids.length;
    settled += affectedRows;
  });
  return { settled, lost: owned - settled, ...(unrenewed.length > 0 && { unrenewed }) };
}

/**
 * What settling came to when a reconnect happened on the way: a statement may have been
 * committed by the lost attempt (and so changed nothing the second time), so count instead the
 * rows someone else holds now; the rest were settled by us.
 */
async function settlementAfterReconnect(db: Database, table: QuotedIdentifier, settles: readonly PendingWrite[]): Promise<Settlement> {
  let lost = 0;
  let owned = 0;
  for (const settle of settles) {
    if (!settle.counted || settle.ids.length === 0) continue;
    owned += settle.ids.length;
    const [row] = await db.query<Array<{ others: number }>>(completeSql.HELD_BY_OTHERS_SQL(table), [settle.ids, settle.token]);
    lost += Number(row?.others ?? 0);
  }
  // Whether a renewal was applied by the attempt that was lost is not known: none is believed.
  const unrenewed = settles.flatMap((settle) => (settle.renews === true ? [settle.token] : []));
  return { settled: owned - lost, lost, ...(unrenewed.length > 0 && { unrenewed }) };
}
