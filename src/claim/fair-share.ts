import type { Candidate } from './candidate-order.js';

/**
 * Where each kind's round-robin over its groups goes on: the group its last claim took a job of.
 * A claim loop keeps one; each process thus goes round on its own, and the claims of all of them
 * together still take about one job of each group in turn. It also keeps how many groups with
 * waiting jobs the kind's last read found when that read came round to its start: the next reads
 * no more than those and two more (an index dive each, sql/groups.ts), so a kind with few groups,
 * or none waiting, costs a claim a few dives instead of fifty, and a new group is found the claim
 * after it appears.
 */
export class GroupRotation {
  private readonly after = new Map<string, string>();
  private readonly found = new Map<string, number>();

  /** The group after which the kind's next claim starts ('' before the first). */
  of(kind: string): string {
    return this.after.get(kind) ?? '';
  }

  moveTo(kind: string, group: string): void {
    this.after.set(kind, group);
  }

  /** How many groups the kind's next claim reads, at most `most`. */
  groupsToRead(kind: string, most: number): number {
    const found = this.found.get(kind);
    return found === undefined ? most : Math.min(most, found + 2);
  }

  /** The kind's last claim read `read` groups and found `distinct` of them (fewer: it came round to its start). */
  sawGroups(kind: string, read: number, distinct: number): void {
    if (distinct < read) this.found.set(kind, distinct);
    else this.found.delete(kind);
  }
}

/** A job of a grouped kind as the fair reads return it; `group` null for a job without one. */
export interface GroupedCandidate {
  id: number;
  priority: number;
  group: string | null;
}

/** What a claim of a grouped kind read, in the rotation's order. */
export interface GroupShareInput {
  /** Jobs whose lease ran out, oldest first: taken first, within their group's limit. */
  expired: ReadonlyArray<{ id: number; group: string | null }>;
  /** The groups with waiting jobs, from where the rotation stands, each with its due jobs by priority and age and the room under its limits. */
  groups: ReadonlyArray<{ group: string; room: number; jobs: readonly GroupedCandidate[] }>;
  /** Due jobs without a group: they take one turn of each round, as though one more group. */
  ungrouped: readonly GroupedCandidate[];
  /** Most jobs to take. */
  take: number;
}

/**
 * The candidates a claim of a grouped kind tries to lock, at most `take`: expired leases first,
 * then round by round one job of each group in the rotation's order (and one without a group),
 * none of a group beyond its room. Also where the rotation moves to: the last group taken of, or
 * when none could be (every group at its limit), the last one read, so the next claim looks on.
 */
export function shareRoundRobin({ expired, groups, ungrouped, take }: GroupShareInput): { candidates: Candidate[]; rotateTo: string | undefined } {
  const room = new Map(groups.map(({ group, room }) => [group, room]));
  const candidates: Candidate[] = [];
  const roomFor = (group: string | null) => group === null || (room.get(group) ?? Infinity) > 0;
  const spend = (group: string | null) => {
    if (group !== null) room.set(group, (room.get(group) ?? Infinity) - 1);
  };
  for (const job of expired) {
    if (candidates.length >= take) break;
    if (!roomFor(job.group)) continue;
    spend(job.group);
    candidates.push({ id: job.id, priority: null });
  }
  let rotateTo: string | undefined;
  const queues = [...groups.map(({ group, jobs }) => ({ group: group as string | null, jobs })), { group: null, jobs: ungrouped }];
  for (let round = 0; candidates.length < take; round++) {
    let any = false;
    for (const { group, jobs } of queues) {
      const job = jobs[round];
      if (job === undefined || !roomFor(group)) continue;
      any = true;
      spend(group);
      candidates.push({ id: job.id, priority: job.priority });
      if (group !== null) rotateTo = group;
      if (candidates.length >= take) break;
    }
    if (!any) break;
  }
  return { candidates, rotateTo: rotateTo ?? groups.at(-1)?.group };
}

/**
 * How many jobs to read of each of `participants` groups (those with room, and the jobs without
 * a group) so that round-robin can fill `take`: an even share, rounded up.
 */
export const sharePerGroup = (take: number, participants: number): number => (participants === 0 ? 0 : Math.ceil(take / participants));
