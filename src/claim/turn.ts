import type { Database } from '../db/database.js';
import { WriteConflictError } from '../db/server-errors.js';
import { CandidateReader } from './candidates.js';
import { checkClaimOptions } from './check-options.js';
import { TurnCommit } from './commit.js';
import { firstRoundTrip } from './first-round-trip.js';
import { takeInTurn } from './candidate-order.js';
import * as scheduledSql from './sql/scheduled.js';
import type { Statement } from '../db/transaction.js';
import { lockCandidates, lockedAmong, lockedCandidates, markStatements } from './lock.js';
import { claimScope } from './kind-rules.js';
import { GroupRotation } from './fair-share.js';
import { candidatesOfKindsApart, spentApart } from './kinds-apart.js';
import { limitWrites, type Room } from './limit-spend.js';
import { roomUnderTableLimit, spentUnderTableLimit } from './table-limit.js';
import type { SettleRequest, SettleResult, TurnRequest, TurnResult } from './turn-request.js';
import type { Claim, Settlement } from './types.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/**
 * One claim turn, in one transaction and one commit:
 *   1. START TRANSACTION; [lock a lane row;] [paused kinds;] [scheduled jobs come due;] candidates of the lane
 *      [; without a lane, on a queue that was empty, the same read locking them]
 *   2. lock candidates FOR UPDATE SKIP LOCKED (unless 1. did)
 *   3. mark failed; mark claimed; [make the due scheduled jobs waiting;] settle statements; [running totals;] COMMIT
 * Three round trips per batch (two for a woken worker's), where the article used six and two
 * commits. The candidate read takes no locks at READ COMMITTED. More reads only when needed: the
 * lane taken was not the one read, jobs more urgent than the lane's wait elsewhere, or the lane
 * was empty (another lane's jobs that waited too long).
 */
export async function claimTurn(db: Database, table: QuotedIdentifier, request: TurnRequest): Promise<TurnResult> {
  const { batchSize, leaseMicroseconds, ownerId } = checkClaimOptions(request.claim);
  const turn = new TurnCommit(db, table, request);
  const { token, totalsAdded } = turn;
  return db.transaction(async (tx) => {
    const before = await turn.committedBefore();
    if (before !== undefined) return { ...before, totalsAdded };
    const reader = new CandidateReader(tx, table, claimScope(request.claim, request.rules), batchSize, request);
    const first = await firstRoundTrip(tx, table, request, reader);
    const { lane, rules } = first;
    // Due scheduled jobs become waiting with this turn's COMMIT, for the next turn to claim.
    const promote: Statement[] = first.due.length === 0 ? [] : [[scheduledSql.PROMOTE_SQL(table), [first.due]]];
    const counters = turn.counterRow(lane?.index);
    // Rules read anew that hold kinds the first read took in (a loop's first turn, a kind paused,
    // limited or grouped since): the candidates are read again without them, so that no job the
    // claim may not take is locked. Such a lock lasts until the COMMIT, and on Galera a row
    // locked and left unwritten is in no write set: another node's claim of it must wait for it
    // (once seen waiting for innodb_lock_wait_timeout, 50 s, with the cluster's commits behind).
    const readAgain = reader.rescope(claimScope(request.claim, rules));
    let found = (readAgain ? undefined : first.candidates) ?? (await reader.ofLane(lane));
    if (found.length === 0 && lane !== undefined && lane.count > 1) found = await reader.stale();
    // The jobs the turn settles free their slots for it: only limits need them listed.
    const limited = rules !== undefined && (rules.tableLimited || rules.limited.length > 0);
    const settling = limited ? turn.settles.flatMap((settle) => (settle.counted ? settle.ids.map((id) => [id, settle.token] as const) : [])) : [];
    let room: Room = { all: batchSize, limited: Math.min(batchSize, request.limitedRoom ?? batchSize), settling };
    // Under a limit on every kind, every job is a limited one (table-limit.ts).
    const tableLimit = rules?.tableLimited === true ? await roomUnderTableLimit(tx, table, rules.queue, room) : undefined;
    if (tableLimit !== undefined) room = { ...room, all: tableLimit.room, limited: tableLimit.room };
    // Kinds with a limit or with groups are claimed apart (kinds-apart.ts), in turn with the rest.
    const apart = await candidatesOfKindsApart(tx, table, request.claim, rules, request.rotation ?? new GroupRotation(), room);
    found = takeInTurn([apart.candidates, found], room.all);
    const filledTable = tableLimit?.plan?.fills === true && found.length >= tableLimit.room;
    const heldBack = tableLimit?.heldBack ?? (filledTable ? 'full' : apart.heldBack);
    const result = (claimCount: TurnResult['claimCount'], claim: Claim, settlement: Settlement): TurnResult => ({
      settlement,
      claim,
      claimCount,
      totalsAdded,
      ...(lane !== undefined && { lane: lane.index }),
      ...(first.waitedForLane && { waitedForLane: true }),
      ...(rules !== undefined && { rules }),
      ...(reader.laneLeastUrgent !== undefined && { laneLeastUrgent: reader.laneLeastUrgent }),
      ...(heldBack !== undefined && { heldBack }),
      ...(promote.length > 0 && { promoted: first.due.length }),
      ...(first.nextDueInMs !== undefined && { nextDueInMs: first.nextDueInMs }),
    });
    const nothingClaimed = async (claimCount: TurnResult['claimCount'], candidates: number) =>
      result(claimCount, { token, jobs: [], candidates, failedIds: [] }, (await turn.commit(tx, counters, claimCount, { jobs: [], writes: promote, failedIds: [], candidates })).settlement);
    if (found.length === 0) return nothingClaimed('none', 0);
    // The first round trip locked the candidates already, unless kinds read apart came after it.
    const lockedFirst = apart.candidates.length === 0 && tableLimit === undefined ? first.locked : undefined;
    const locked = lockedFirst !== undefined ? lockedCandidates(lockedAmong(lockedFirst, found), found, rules, apart.ids) : await lockCandidates(tx, table, found, rules, apart.ids);
    if (locked.jobs.length === 0 && locked.exhausted.length === 0) return nothingClaimed(locked.candidates > 0 ? 'empty' : 'none', locked.candidates);
    // The rates' log after the claim's UPDATE: a claim is logged no earlier than its jobs' owner_date,
    // however long the statements between take on a loaded server.
    const marks = markStatements(table, locked, { ownerId, token, leaseMicroseconds }, counters);
    const writes = [...marks, ...limitWrites(rules?.queue ?? '', [...spentApart(apart, locked.jobs), ...spentUnderTableLimit(tableLimit, locked.jobs)]), ...promote];
    const failedIds = locked.exhausted.map((job) => job.id);
    const claim = { jobs: locked.jobs, failedIds, candidates: locked.candidates, writes };
    if (db.galera !== undefined && locked.jobs.length > 0) {
      // Galera's row locks are local to a node, and its certification does not catch every lost
      // update: on a 3-node cluster, two claims of the same 200 jobs on two nodes both committed
      // (about 1 drain in 4), and both workers ran them. So on Galera the claim's UPDATE, which
      // re-checks claimability on the latest row, goes alone, and the claim commits only if it
      // changed every row it locked. One more round trip, on Galera only.
      const updated = await tx.run(...writes);
      if ((updated[marks.length - 1] as { affectedRows: number }).affectedRows !== locked.jobs.length) throw new WriteConflictError('a claimed job was taken by another node');
      claim.writes = [];
    }
    const { jobs, settlement } = await turn.commit(tx, counters, 'claimed', claim);
    return result('claimed', { token, jobs, candidates: locked.candidates, failedIds }, settlement);
  });
}

/** A turn that only settles: the settle statements and the running totals with the COMMIT, in one round trip. */
export async function settleTurn(db: Database, table: QuotedIdentifier, request: SettleRequest): Promise<SettleResult> {
  const turn = new TurnCommit(db, table, request);
  return { settlement: await turn.commitSettles(db), totalsAdded: turn.totalsAdded };
}
