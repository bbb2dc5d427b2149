import type { Candidate } from './candidate-order.js';

/**
 * Where each kind's round-robin over its groups goes on: the group its last claim took a job of.
 * A claim loop keeps one; each process thus goes round on its own, and the claims of all of them
 * together still take about one job of each group in turn.
 *
 * It also sizes the kind's reads of groups (an index dive each, sql/groups.ts): a claim that may
 * take `take` jobs reads as many groups, two more, and as many more as its last read found without
 * room (at their limit, or held by another claim), at least 8 and at most 50: twice `take` every
 * time, under a limit of 1 per group, read twice the groups the claims took of and drained 1.13x
 * slower (bench-results/groups-read-ahead.json). Once a read came round to its start, the next
 * reads no more than the groups it found and two more, so a kind with few groups, or none waiting,
 * costs a claim a few dives instead of fifty, and a new group is found the claim after it appears.
 *
 * And it keeps the groups the last read found past the one the rotation moved to, for the next
 * claim to begin with: a claim under a limit per group took of about half the groups it read, and
 * diving for the other half again cost a fifth of the server's time a job (a dive is a statement of
 * its own, 0.1 ms; bench-results/groups-read-ahead.json). The next claim dives only for the groups
 * after them. A group among them that has no job waiting any more gives the claim nothing; one new
 * between them is found when the rotation comes round. Kept for a second at most: an idle loop's
 * next claim dives afresh.
 */
export class GroupRotation {
  private readonly after = new Map<string, string>();
  private readonly found = new Map<string, number>();
  private readonly ahead = new Map<string, { groups: readonly GroupSeen[]; at: number }>();
  private readonly held = new Map<string, number>();

  /** The group after which the kind's next claim starts ('' before the first). */
  of(kind: string): string {
    return this.after.get(kind) ?? '';
  }

  /** Moves the kind's rotation to `group`, and keeps the groups of `read` after it for the next claim. */
  moveTo(kind: string, group: string, read: readonly GroupSeen[] = []): void {
    this.after.set(kind, group);
    const at = read.findIndex((seen) => seen.group === group);
    if (at < 0 || at === read.length - 1) this.ahead.delete(kind);
    else this.ahead.set(kind, { groups: read.slice(at + 1), at: performance.now() });
  }

  /** The groups past the rotation's own that the kind's last read found, at most `most`, if it was less than a second ago. */
  seenAhead(kind: string, most: number): readonly GroupSeen[] {
    const ahead = this.ahead.get(kind);
    return ahead === undefined || performance.now() - ahead.at > AHEAD_KEPT_MS ? [] : ahead.groups.slice(0, most);
  }

  /** How many groups the kind's next claim reads, to take up to `take` jobs. */
  groupsToRead(kind: string, take: number): number {
    const wanted = Math.min(MOST_GROUPS, Math.max(FEWEST_GROUPS, take + 2 + (this.held.get(kind) ?? take)));
    const found = this.found.get(kind);
    return found === undefined ? wanted : Math.min(wanted, found + 2);
  }

  /** The kind's last claim read `held` groups that had no room. */
  sawHeld(kind: string, held: number): void {
    this.held.set(kind, held);
  }

  /** The kind's last claim read `read` groups and found `distinct` of them (fewer: it came round to its start). */
  sawGroups(kind: string, read: number, distinct: number): void {
    if (distinct < read) this.found.set(kind, distinct);
    else this.found.delete(kind);
  }
}

const AHEAD_KEPT_MS = 1000;
const FEWEST_GROUPS = 8;
const MOST_GROUPS = 50;

/** A group with waiting jobs as a claim's read found it, and whether it had a row in jobq_group_locks. */
export interface GroupSeen {
  group: string;
  locks: boolean;
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
