import { PART, type CandidateRow } from './sql/claim.js';

/** A job a claim tries to lock; `priority` is null for an expired lease (taken first, whatever its priority). */
export interface Candidate {
  id: number;
  priority: number | null;
}

/**
 * What a claim tries to lock, from the rows of its candidate query (sql/claim.ts), at most
 * `limit`: expired leases first; then the lane's waiting jobs together with those jobs from the
 * head of the queue that come before the lane's last one by priority, by priority and then id.
 * With every job at the same priority no head job qualifies, and claims stay in their lanes.
 * Claims of several kinds get a lane read per kind: the sort merges them, the id standing in for
 * age (a retried or delayed job, whose id is older than its due time, goes a little early).
 */
export function orderCandidates(rows: readonly CandidateRow[], limit: number): Candidate[] {
  const expired: Candidate[] = [];
  const lane: CandidateRow[] = [];
  const head: CandidateRow[] = [];
  for (const row of rows) {
    if (row.part === PART.expired) expired.push({ id: row.id, priority: null });
    else (row.part === PART.lane ? lane : head).push(row);
  }
  let laneWorst = -Infinity;
  for (const row of lane) laneWorst = Math.max(laneWorst, row.priority);
  let ahead = head.filter((row) => row.priority < laneWorst);
  if (ahead.length > 0) {
    const inLane = new Set(lane.map((row) => row.id));
    ahead = ahead.filter((row) => !inLane.has(row.id));
  }
  const waiting = ahead.length === 0 ? lane : [...lane, ...ahead];
  // The order is the claim's order (lock.ts): a worker starts jobs of one priority in it.
  waiting.sort((a, b) => a.priority - b.priority || a.id - b.id);
  return [...expired, ...waiting].slice(0, limit);
}

/** The priority of the lane's least urgent candidate; undefined when the lane has none. */
export function laneLeastUrgent(rows: readonly CandidateRow[]): number | undefined {
  let laneWorst: number | undefined;
  for (const row of rows) if (row.part === PART.lane) laneWorst = Math.max(laneWorst ?? -Infinity, row.priority);
  return laneWorst;
}

/**
 * The lane's least urgent priority (`laneWorst`, laneLeastUrgent of the rows) when jobs more
 * urgent than it may wait in other lanes: then the head of the queue up to it is worth reading.
 * The candidate query looked for one such job below `probedBelow` (undefined: it did not look;
 * see candidatesOldest). It may have missed some when it found one (they may be more urgent
 * still) or when the lane's least urgent is beyond that bound. Undefined otherwise, and for an
 * empty lane.
 */
export function headBeforeLane(rows: readonly CandidateRow[], laneWorst: number | undefined, probedBelow: number | undefined): number | undefined {
  if (laneWorst === undefined || probedBelow === undefined) return undefined;
  return rows.some((row) => row.part === PART.ahead) || probedBelow < laneWorst ? laneWorst : undefined;
}

/**
 * The locked jobs a claim keeps: none less urgent than a waiting candidate it could not lock
 * (another claim is taking that one right now). Otherwise, with two claims racing for the last
 * urgent jobs, the loser filled its batch with less urgent ones and could run them first. With
 * every job at the same priority nothing is dropped; dropped jobs stay waiting, their locks end
 * with the claim's COMMIT.
 */
export function keepNoLessUrgentThanSkipped<T extends { id: number; priority: number }>(candidates: readonly Candidate[], locked: readonly T[]): T[] {
  const lockedIds = new Set(locked.map((job) => job.id));
  let skippedBest = Infinity;
  for (const { id, priority } of candidates) if (priority !== null && !lockedIds.has(id)) skippedBest = Math.min(skippedBest, priority);
  return skippedBest === Infinity ? [...locked] : locked.filter((job) => job.priority <= skippedBest);
}

/**
 * Lists of candidates taken in turn, one of each, at most `limit`, each id once: the kinds a
 * claim reads apart, and those and the rest, share a batch, so that a kind with a long backlog
 * does not keep the others waiting.
 */
export function takeInTurn(lists: ReadonlyArray<readonly Candidate[]>, limit: number): Candidate[] {
  const filled = lists.filter((list) => list.length > 0);
  if (filled.length <= 1) return (filled[0] ?? []).slice(0, limit);
  const taken = new Map<number, Candidate>();
  const longest = Math.max(...filled.map((list) => list.length));
  for (let i = 0; i < longest && taken.size < limit; i++) {
    for (const list of filled) if (i < list.length && taken.size < limit) taken.set(list[i]!.id, list[i]!);
  }
  return [...taken.values()];
}
