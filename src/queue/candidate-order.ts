import { PART, type CandidateRow } from './sql/claim.js';

/**
 * The ids a claim tries to lock, from the rows of its candidate query (sql/claim.ts), at most
 * `limit`: expired leases first; then the lane's waiting jobs together with those jobs from the
 * head of the queue that come before the lane's last one by priority, smaller priority first
 * (a stable sort: at equal priority the lane's own jobs, in due order, come first). With every
 * job at the same priority no head job qualifies, and claims stay in their lanes.
 */
export function candidateIds(rows: readonly CandidateRow[], limit: number): number[] {
  const expired: CandidateRow[] = [];
  const lane: CandidateRow[] = [];
  const head: CandidateRow[] = [];
  for (const row of rows) (row.part === PART.expired ? expired : row.part === PART.lane ? lane : head).push(row);
  let laneWorst = -Infinity;
  for (const row of lane) laneWorst = Math.max(laneWorst, row.priority);
  const seen = new Set(lane.map((row) => row.id));
  const ahead = head.filter((row) => row.priority < laneWorst && !seen.has(row.id));
  const waiting = ahead.length === 0 ? lane : [...lane, ...ahead].sort((a, b) => a.priority - b.priority);
  return [...expired.map((row) => row.id), ...waiting.map((row) => row.id)].slice(0, limit);
}
