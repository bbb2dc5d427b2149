import type { Statement, Transaction } from '../db/transaction.js';
import type { CandidateSource } from '../db/replica.js';
import { DEFAULT_PRIORITY, DEFAULTS } from '../config/defaults.js';
import { headBeforeLane, laneLeastUrgent, orderCandidates, type Candidate } from './candidate-order.js';
import * as claimSql from './sql/claim.js';
import type { CandidateRow, ClaimScope, Lane, TakenLane } from './sql/claim.js';
import type { TurnRequest } from './turn-request.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/** A lane's candidate query, and the priority below which it looks for one job ahead of the lane (undefined: it does not). */
export interface LaneRead {
  statement: Statement;
  probedBelow: number | undefined;
}

/**
 * The candidates of one claim turn: the candidate queries for its scope, read on the primary
 * inside the turn's transaction or on the replica, and put in the order the claim locks them
 * (candidate-order.ts). Remembers the least urgent priority it saw in the lane, for the next turn.
 */
export class CandidateReader {
  /** The least urgent priority among the lane's candidates, once a read found any. */
  laneLeastUrgent: number | undefined;

  constructor(
    private readonly tx: Transaction,
    private readonly table: QuotedIdentifier,
    private scope: ClaimScope | undefined,
    private readonly batchSize: number,
    private readonly request: Pick<TurnRequest, 'candidateSource' | 'laneLeastUrgent' | 'preferred' | 'claim'>,
  ) {}

  /** Reads by `scope` from now on; true if it is not the scope read by so far. */
  rescope(scope: ClaimScope | undefined): boolean {
    const changed = JSON.stringify(scope) !== JSON.stringify(this.scope);
    this.scope = scope;
    return changed;
  }

  /** The replica the candidates are read on while it can be used. */
  get source(): CandidateSource | undefined {
    return this.request.candidateSource;
  }

  /** The lane's candidate query; undefined when the scope leaves nothing to claim (every own kind paused). */
  laneRead(lane: Lane | TakenLane | undefined): LaneRead | undefined {
    const { scope, table, batchSize } = this;
    if (scope === undefined) return undefined;
    const preferred = this.request.preferred;
    if (preferred !== undefined && scope.kinds === undefined) {
      return { statement: claimSql.candidatesPreferred(table, preferred(), lane, batchSize), probedBelow: undefined };
    }
    const leastUrgent = this.request.laneLeastUrgent ?? DEFAULT_PRIORITY;
    return { statement: claimSql.candidatesOldest(table, scope, lane, batchSize, leastUrgent), probedBelow: claimSql.readsAhead(scope, lane) ? leastUrgent : undefined };
  }

  /**
   * For a claim of the whole queue in one read (no lane, no replica, no preferred range, no
   * reading kind by kind), the same ranges read with locks (sql/claim.ts, candidatesLocked).
   */
  lockingRead(lane: Lane | TakenLane | undefined): Statement | undefined {
    const { scope } = this;
    if (lane !== undefined || scope === undefined || scope.withoutKind || this.source !== undefined || this.request.preferred !== undefined) return undefined;
    return claimSql.candidatesLocked(this.table, scope, this.batchSize);
  }

  /** The lane's candidates, read now. */
  async ofLane(lane: Lane | undefined): Promise<Candidate[]> {
    const read = this.laneRead(lane);
    return read === undefined ? [] : this.ordered(await this.read(read.statement), read.probedBelow);
  }

  /**
   * The lane's rows in claim order, with the head of the queue when it may hold jobs more urgent
   * than the lane's least urgent (see candidatesOldest): one more read then.
   */
  async ordered(rows: CandidateRow[], probedBelow: number | undefined): Promise<Candidate[]> {
    const laneWorst = laneLeastUrgent(rows);
    this.laneLeastUrgent = laneWorst ?? this.laneLeastUrgent;
    const below = headBeforeLane(rows, laneWorst, probedBelow);
    if (below === undefined || this.scope === undefined) return orderCandidates(rows, this.batchSize);
    const ahead = await this.read(claimSql.candidatesAhead(this.table, this.scope, below, Math.min(this.batchSize, claimSql.HEAD_READ_LIMIT)));
    return orderCandidates([...rows, ...ahead], this.batchSize);
  }

  /**
   * Jobs stranded in other lanes, for a claim whose own lane had none; none for jobs without a
   * kind while kinds are paused (they wait for the next turn of their lane).
   */
  async stale(): Promise<Candidate[]> {
    const { scope } = this;
    if (scope === undefined || (scope.withoutKind && (scope.kinds ?? []).length === 0)) return [];
    const stealAfterMicroseconds = Math.round((this.request.claim.stealAfterMs ?? DEFAULTS.stealAfterMs) * 1000);
    const statement = claimSql.candidatesStale(this.table, { ...(scope.kinds !== undefined && { kinds: scope.kinds }) }, stealAfterMicroseconds, this.batchSize);
    return orderCandidates(await this.read(statement), this.batchSize);
  }

  /** Reads on the replica while it can be used, else on the primary in the turn's transaction. */
  async read(statement: Statement): Promise<CandidateRow[]> {
    return (await this.source?.read<CandidateRow>(statement)) ?? ((await this.tx.run(statement))[0] as CandidateRow[]);
  }
}
