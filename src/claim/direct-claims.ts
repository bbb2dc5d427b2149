import type { QuotedIdentifier } from '../config/identifiers.js';
import { DEFAULTS } from '../config/defaults.js';
import { checkNumber, OPTIONS } from '../config/options.js';
import type { Database } from '../db/database.js';
import { ExitCode, JobqError } from '../errors.js';
import { completion, failure, handBack, leaseRenewal, type PendingWrite } from './pending-writes.js';
import { GroupRotation } from './fair-share.js';
import { noKindRules, type KindRules } from './kind-rules.js';
import { TotalsTally } from './running-totals.js';
import { claimTurn, settleTurn } from './turn.js';
import type { Claim, ClaimOptions, Settlement } from './types.js';

/** Which of a claim's jobs a settlement is about; all of them when omitted. */
export interface SettleOptions {
  ids?: readonly number[];
}

export interface FailOptions extends SettleOptions {
  /** Jobs claimed this often go to `failed` instead of back to the queue (default 5). */
  maxAttempts?: number;
  /** The first retry waits this long; each further attempt doubles it (default 1000, at most an hour). */
  retryDelayMs?: number;
}

/** The queue's table as the low-level calls need it. */
export interface ClaimTable {
  name: string;
  quoted: QuotedIdentifier;
  /** The table's partition count: a claim reads the lanes' partitions. */
  partitions(): Promise<number>;
}

/**
 * The low-level calls of `JobQueue` (`claim`, `complete`, `completeAndClaim`, `release`, `fail`,
 * `extendLease`) for callers that run their own loop: each is one turn of the claim engine on the
 * queue's connection, committed at once, its counts added to the running totals with its COMMIT.
 */
export class DirectClaims {
  private readonly rotation = new GroupRotation();
  /** The rules on kinds as the last claim read them: whether the next must read the kinds present. */
  private rules: KindRules | undefined;

  constructor(
    private readonly db: Database,
    private readonly table: ClaimTable,
  ) {}

  async claim(options: ClaimOptions): Promise<Claim> {
    return (await this.turn([], options)).claim;
  }

  complete(claim: Claim, options: SettleOptions & { keepDone?: boolean }): Promise<Settlement> {
    return this.settle(completion(this.table.quoted, claim, idsOf(claim, options.ids), options.keepDone ?? DEFAULTS.keepDone));
  }

  completeAndClaim(previous: Claim, options: ClaimOptions & { keepDone?: boolean }): Promise<{ settlement: Settlement; claim: Claim }> {
    const settle = previous.jobs.length === 0 ? [] : completion(this.table.quoted, previous, idsOf(previous), options.keepDone ?? DEFAULTS.keepDone);
    return this.turn(settle, options);
  }

  release(claim: Claim, options: SettleOptions): Promise<Settlement> {
    return this.settle(handBack(this.table.quoted, claim, idsOf(claim, options.ids)));
  }

  async fail(claim: Claim, error: unknown, options: FailOptions): Promise<Settlement & { failed: number }> {
    const policy = { maxAttempts: options.maxAttempts ?? DEFAULTS.maxAttempts, retryDelayMs: options.retryDelayMs ?? DEFAULTS.retryDelayMs };
    const ids = idsOf(claim, options.ids);
    const settlement = await this.settle(failure(this.table.quoted, claim, ids, error, policy));
    const failed = claim.jobs.filter((job) => ids.includes(job.id) && job.attempts >= policy.maxAttempts).length;
    return { ...settlement, failed };
  }

  async extendLease(claim: Claim, leaseSeconds: number): Promise<number> {
    checkNumber(OPTIONS.leaseSeconds, leaseSeconds);
    if (claim.jobs.length === 0) return 0;
    const [sql, values] = leaseRenewal(this.table.quoted, claim, idsOf(claim), leaseSeconds).statement;
    return (await this.db.query<{ affectedRows: number }>(sql, [...(values ?? [])])).affectedRows;
  }

  private async turn(settle: PendingWrite[], claim: ClaimOptions): Promise<{ settlement: Settlement; claim: Claim }> {
    const partitions = await this.table.partitions();
    // The rules on kinds are read in the turn itself: a claim here never takes a paused kind's jobs.
    const rules = { ...(this.rules ?? noKindRules(this.table.name)), refresh: true };
    const result = await claimTurn(this.db, this.table.quoted, { settle, claim, rules, rotation: this.rotation, totals: this.addedToTotals(), partitions });
    this.rules = result.rules;
    return result;
  }

  private async settle(settle: PendingWrite[]): Promise<Settlement> {
    if (settle.every((write) => write.ids.length === 0)) return { settled: 0, lost: 0 };
    return (await settleTurn(this.db, this.table.quoted, { settle, totals: this.addedToTotals() })).settlement;
  }

  private addedToTotals() {
    return { queue: this.table.name, pending: new TotalsTally(), flush: true };
  }
}

/** The ids of the claim's jobs, or those of `only` after checking that the claim holds each. */
function idsOf(claim: Claim, only?: readonly number[]): readonly number[] {
  if (only === undefined) return claim.jobs.map((job) => job.id);
  const held = new Set(claim.jobs.map((job) => job.id));
  const stranger = only.find((id) => !held.has(id));
  if (stranger !== undefined) throw new JobqError(`job ${stranger} is not part of this claim`, ExitCode.usage);
  return only;
}
