import type { Statement, Transaction } from '../db/transaction.js';
import type { Candidate } from './candidate-order.js';
import type { CandidateReader } from './candidates.js';
import { kindRulesSeen, kindsOf, kindsApart, readsKindByKind, type KindRules } from './kind-rules.js';
import type { LockedRow } from './lock.js';
import * as claimSql from './sql/claim.js';
import * as groupSql from './sql/groups.js';
import type { CandidateRow, Lane, TakenLane } from './sql/claim.js';
import * as laneSql from './sql/lanes.js';
import * as limitSql from './sql/limits.js';
import * as pauseSql from './sql/pause.js';
import * as scheduledSql from './sql/scheduled.js';
import type { TurnRequest } from './turn-request.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/** What the first round trip of a claim turn found. */
export interface FirstRoundTrip {
  /** The lane the claim holds: the row it locked, the one it was given, or none (the whole queue). */
  lane: Lane | undefined;
  /** Every lane row was taken: the claim waited for one. */
  waitedForLane: boolean;
  /** The rules on kinds as the round trip read them (with `rules.refresh`), else as the request gave them. */
  rules: KindRules | undefined;
  /** The candidates of the lane held; undefined when they were read for another lane and must be read again. */
  candidates: Candidate[] | undefined;
  /** The jobs a locking read of the same ranges locked (CandidateReader.lockingRead), when the turn sent one. */
  locked: LockedRow[] | undefined;
  /** Scheduled jobs that have come due, locked for the turn to make waiting (sql/scheduled.ts). */
  due: number[];
  /** In how many ms the next scheduled job comes due, when the request asked (`readNextDue`) and one is scheduled. */
  nextDueInMs: number | undefined;
}

/**
 * The first round trip of a claim turn: START TRANSACTION; [lock a lane row;] [the rules on kinds;]
 * [scheduled jobs come due;] [when the next will;] the candidates of the lane[, and the same read
 * locking them, for a turn without a lane that asks (lockAsRead)]. The candidate read
 * goes to the replica instead when there is one, at the same time. It reads the lane the round
 * trip takes, unless the read goes to a replica or names the lane's partitions: then it reads the
 * lane tried first, which holds only if that one was free at once.
 */
export async function firstRoundTrip(tx: Transaction, table: QuotedIdentifier, request: TurnRequest, reader: CandidateReader): Promise<FirstRoundTrip> {
  const { laneRow, rules } = request;
  const statements: Statement[] = [];
  const at = (statement: Statement) => statements.push(statement) - 1;
  const lanes = laneRow === undefined ? undefined : takeLane(laneRow, at);
  const ruled = rules?.refresh === true ? readRules(table, rules, request, at) : undefined;
  const dueAt = request.skipDue === true ? -1 : at([scheduledSql.DUE_SCHEDULED_SQL(table), [request.claim.batchSize]]);
  const nextDueAt = request.readNextDue === true ? at([scheduledSql.NEXT_DUE_SQL(table)]) : -1;
  const readsTakenLane = laneRow !== undefined && reader.source === undefined && !claimSql.lanesArePartitions(laneRow.lanes, request.partitions);
  const guessed = laneRow === undefined ? givenLane(request) : inPartitions(laneRow.first, laneRow.lanes, request);
  const laneRead = reader.laneRead(readsTakenLane ? { taken: true, count: laneRow!.lanes } satisfies TakenLane : guessed);
  const fromReplica = laneRead === undefined ? undefined : reader.source?.read<CandidateRow>(laneRead.statement);
  const candidatesAt = laneRead === undefined || fromReplica !== undefined ? -1 : at(laneRead.statement);
  // Not when kinds are read apart: their candidates are read after this round trip, and locked
  // with the rest; nor when the rules are read anew: they may hold kinds the read would lock.
  const readsApart = () => rules?.tableLimited === true || kindsApart(request.claim, rules).length > 0;
  const lockingRead = request.lockAsRead === true && rules?.refresh !== true && candidatesAt >= 0 && !readsApart() ? reader.lockingRead(guessed) : undefined;
  const lockedAt = lockingRead === undefined ? -1 : at(lockingRead);
  const [results, replicaRows] = await Promise.all([statements.length > 0 ? tx.run(...statements) : [], fromReplica]);

  const taken = lanes?.taken(results);
  const waitedForLane = lanes?.waited(results) ?? false;
  const lane = laneRow === undefined ? guessed : taken === undefined ? undefined : inPartitions(taken, laneRow.lanes, request);
  const guessHeld = laneRow === undefined || readsTakenLane || (!waitedForLane && taken === laneRow.first);
  const rows = laneRead === undefined ? [] : candidatesAt >= 0 ? (results[candidatesAt] as CandidateRow[]) : (replicaRows ?? (await reader.read(laneRead.statement)));
  return {
    lane,
    waitedForLane,
    rules: ruled === undefined ? rules : await withKindsPresent(tx, table, ruled(results), request),
    candidates: guessHeld ? await reader.ordered(rows, laneRead?.probedBelow) : undefined,
    locked: lockedAt < 0 ? undefined : (results[lockedAt] as LockedRow[]),
    due: dueAt < 0 ? [] : (results[dueAt] as Array<{ id: number }>).map((row) => Number(row.id)),
    nextDueInMs: nextDueAt < 0 ? undefined : msOrUndefined((results[nextDueAt] as Array<{ due_in_us: number | null }>)[0]?.due_in_us),
  };
}

const msOrUndefined = (us: number | null | undefined) => (us === null || us === undefined ? undefined : Number(us) / 1000);

/** The lane-row statements (sql/lanes.ts): take the first free lane from `first`, else wait for `first`; read what was taken. */
function takeLane(laneRow: NonNullable<TurnRequest['laneRow']>, at: (statement: Statement) => number) {
  const take = (statement: string) => at([statement, [laneRow.queue, laneRow.first]]);
  laneSql.TAKE_LANE_SQL.firstFree.forEach(take);
  const freeAt = at([laneSql.TAKEN_LANE_SQL]);
  take(laneSql.TAKE_LANE_SQL.waitIfNone);
  const takenAt = at([laneSql.TAKEN_LANE_SQL]);
  const laneIn = (results: unknown[], index: number) => {
    const lane = (results[index] as Array<{ lane: number | null }>)[0]?.lane;
    return lane === null || lane === undefined ? undefined : Number(lane);
  };
  return { waited: (results: unknown[]) => laneIn(results, freeAt) === undefined, taken: (results: unknown[]) => laneIn(results, takenAt) };
}

/** The paused, limited and grouped kinds, and the kinds present when a claim of the whole queue must read the others kind by kind. */
function readRules(table: QuotedIdentifier, rules: KindRules, request: TurnRequest, at: (statement: Statement) => number) {
  const pausedAt = at([pauseSql.PAUSED_KINDS_SQL, [rules.queue]]);
  const limitedAt = at([limitSql.LIMITED_KINDS_SQL, [rules.queue]]);
  const groupedAt = at([groupSql.GROUPED_KINDS_SQL, [rules.queue]]);
  const presentAt = readsKindByKind(rules) && (request.claim.kinds ?? []).length === 0 ? at([pauseSql.KINDS_PRESENT_SQL(table)]) : -1;
  return (results: unknown[]) =>
    kindRulesSeen(rules.queue, { paused: results[pausedAt], limited: results[limitedAt], grouped: results[groupedAt], ...(presentAt >= 0 && { present: results[presentAt] }) });
}

/**
 * Rules read anew that hold kinds for the first time, for a claim of the whole queue: with the
 * kinds present, which the round trip read only if the rules it went by held kinds already, in
 * one statement more, for the turn to read its candidates without the held kinds (turn.ts).
 */
async function withKindsPresent(tx: Transaction, table: QuotedIdentifier, rules: KindRules, request: TurnRequest): Promise<KindRules> {
  if (rules.present !== undefined || !readsKindByKind(rules) || (request.claim.kinds ?? []).length > 0) return rules;
  const [present] = await tx.run([pauseSql.KINDS_PRESENT_SQL(table)]);
  return { ...rules, present: kindsOf(present) };
}

function givenLane(request: TurnRequest): Lane | undefined {
  const lane = request.claim.lane;
  return lane === undefined ? undefined : inPartitions(lane.index, lane.count, request);
}

function inPartitions(index: number, count: number, request: TurnRequest): Lane {
  return { index, count, ...(request.partitions !== undefined && { partitions: request.partitions }) };
}
