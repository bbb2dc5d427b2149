import type { Statement, Transaction } from '../db/transaction.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import { orderCandidates, takeInTurn, type Candidate } from './candidate-order.js';
import { shareRoundRobin, sharePerGroup, type GroupedCandidate, type GroupRotation } from './fair-share.js';
import { kindsApart, type KindRules } from './kind-rules.js';
import * as claimSql from './sql/claim.js';
import type { CandidateRow } from './sql/claim.js';
import * as groupSql from './sql/groups.js';
import * as limitSql from './sql/limits.js';
import { rateWindow, settlingCount, type HeldBack, type KindPlan, type LimitRow, type LockedJob, type Room, type Spent } from './limit-spend.js';
import type { ClaimOptions } from './types.js';

/** The candidates a claim turn may take of the kinds it reads apart, and what its limits need written. */
export interface KindsApart {
  candidates: Candidate[];
  /** The ids among them, for the lock to keep (kind-rules.ts, withinKindRules). */
  ids: ReadonlySet<number>;
  /** The kinds read under their limits, for limitWrites. */
  limited: readonly KindPlan[];
  /** Why limited kinds gave less than the room, if they did (HeldBack). */
  heldBack?: HeldBack;
}

const none = (heldBack: HeldBack | undefined): KindsApart => ({ candidates: [], ids: new Set(), limited: [], ...(heldBack !== undefined && { heldBack }) });

/** Groups read per claim of a grouped kind, for a claim of `take` jobs: twice as many, so that groups at their limit leave enough others. */
const groupsToRead = (take: number) => Math.min(200, Math.max(8, 2 * take));

/**
 * Of the kinds the claim reads apart (kind-rules.ts, kindsApart): for the limited ones, locks the
 * limit rows no other claim holds and counts each kind's running jobs and the jobs claimed within
 * its rate's window (one round trip); then reads up to the room under each limit of the kind's
 * due jobs, each kind's taken in turn with the others', at most `room.all` in all (`room.limited`
 * of limited kinds). A kind whose jobs
 * carry groups, or that has a limit per group, is shared round-robin between its groups
 * (fair-share.ts), from where `rotation` stands, within each group's limits (two more round
 * trips: the groups with waiting jobs, their running counts and rates spent, then the groups'
 * jobs); any other, expired leases first, then by priority and age (one). The limit rows stay
 * locked to the COMMIT.
 */
export async function candidatesOfKindsApart(tx: Transaction, table: QuotedIdentifier, claim: ClaimOptions, rules: KindRules | undefined, rotation: GroupRotation, room: Room): Promise<KindsApart> {
  const kinds = kindsApart(claim, rules);
  if (rules === undefined || kinds.length === 0 || room.all <= 0) return none(undefined);
  const { plans, heldBack } = await planKinds(tx, table, rules, kinds, room);
  if (plans.length === 0) return none(heldBack);
  const grouped = plans.filter((plan) => plan.grouped);
  const oldest = plans.filter((plan) => !plan.grouped);
  const reads = oldest.map(({ kind, take }): Statement => claimSql.candidatesOldest(table, { kinds: [kind] }, undefined, take));
  const groupReads = grouped.map((plan) => groupHeads(table, rules.queue, plan, rotation));
  const results = await tx.run(...reads, ...groupReads.flatMap((read) => read.statements));
  const byKind = oldest.map(({ take }, i) => orderCandidates(results[i] as CandidateRow[], take));
  let at = reads.length;
  const shares = groupReads.map((read) => read.shares(results.slice(at, (at += read.statements.length))));
  const jobReads = shares.flatMap((share) => share.statements);
  const jobResults = jobReads.length === 0 ? [] : await tx.run(...jobReads);
  at = 0;
  for (const [i, share] of shares.entries()) {
    const { candidates: fair, rotateTo } = share.fill(jobResults.slice(at, (at += share.statements.length)));
    if (rotateTo !== undefined) rotation.moveTo(grouped[i]!.kind, rotateTo);
    byKind.push(fair);
  }
  // Each kind's candidates in turn with the others': a kind with many jobs does not fill the batch.
  const candidates = takeInTurn(byKind, room.all);
  if (candidates.length === 0) return none(heldBack);
  return { candidates, ids: new Set(candidates.map((candidate) => candidate.id)), limited: plans.filter((plan) => plan.limited), ...(heldBack !== undefined && { heldBack }) };
}

/** How many jobs the claim reads of each kind: at most its room, and no more than the limits it could lock leave. */
async function planKinds(tx: Transaction, table: QuotedIdentifier, rules: KindRules, kinds: readonly string[], room: Room): Promise<{ plans: KindPlan[]; heldBack?: HeldBack }> {
  const limited = kinds.filter((kind) => rules.limited.includes(kind));
  const { settling } = room;
  const [locked, counted, rated, leaving = []] = (
    limited.length === 0
      ? [[], [], []]
      : await tx.run(
          [limitSql.LOCK_LIMITS_SQL, [rules.queue, limited]],
          [limitSql.COUNT_RUNNING_SQL(table), [limited]],
          [limitSql.RATE_SPENT_SQL, [limitSql.RATE_MARGIN_MICROSECONDS, rules.queue, limited]],
          ...settlingCount(table, settling),
        )
  ) as [LimitRow[], Array<{ kind: string; running: number }>, Array<{ kind: string; spent: number }>, Array<{ kind: string; settling: number }>?];
  const limits = new Map(locked.map((row) => [row.kind, row]));
  const settled = new Map(leaving.map((row) => [row.kind, Number(row.settling)]));
  const running = new Map(counted.map((row) => [row.kind, Number(row.running) - (settled.get(row.kind) ?? 0)]));
  const spent = new Map(rated.map((row) => [row.kind, Number(row.spent)]));
  const plans: KindPlan[] = [];
  let heldBack: HeldBack | undefined;
  for (const kind of kinds) {
    const limit = limits.get(kind);
    // A limited kind whose row another claim holds is that claim's to take this turn.
    if (limited.includes(kind) && limit === undefined) {
      heldBack = 'busy';
      continue;
    }
    const rate = rateWindow(limit?.rate_jobs, limit?.rate_seconds);
    const slots = limit?.concurrency == null ? Infinity : Number(limit.concurrency) - (running.get(kind) ?? 0);
    const others = Math.min(limit === undefined ? room.all : room.limited, rate === null ? Infinity : rate.jobs - (spent.get(kind) ?? 0));
    // The kind is full, or this claim fills it.
    if (slots <= others) heldBack ??= 'full';
    const take = Math.min(slots, others);
    if (take <= 0) continue;
    const groupConcurrency = limit?.group_concurrency == null ? null : Number(limit.group_concurrency);
    const groupRate = rateWindow(limit?.group_rate_jobs, limit?.group_rate_seconds);
    const perGroup = groupConcurrency !== null || groupRate !== null;
    plans.push({ kind, take, grouped: perGroup || rules.grouped.includes(kind), limited: limit !== undefined, groupConcurrency, rate, groupRate });
  }
  return { plans, ...(heldBack !== undefined && { heldBack }) };
}

/**
 * The first of a grouped kind's reads: its expired leases of jobs with a group, its jobs without
 * one (expired leases, then due ones by priority and age), and its groups with due jobs from where
 * the rotation stands (and, past the end, from the first group round to it again). `shares` then
 * says which jobs of which groups to read next, and `fill` shares them out.
 */
function groupHeads(table: QuotedIdentifier, queue: string, plan: KindPlan, rotation: GroupRotation) {
  const { kind, take, groupConcurrency, groupRate } = plan;
  const after = rotation.of(kind);
  const count = groupsToRead(take);
  const groupsAfter = (start: string, count: number, inclusive = false): Statement => [
    groupSql.groupsAfterSql(table, groupConcurrency !== null, groupRate !== null, inclusive),
    [...(groupConcurrency !== null ? [kind] : []), ...(groupRate !== null ? [queue, kind, groupRate.windowUs] : []), kind, start, count],
  ];
  const statements: Statement[] = [
    [groupSql.EXPIRED_IN_GROUPS_SQL(table), [kind, take]],
    claimSql.candidatesOldest(table, { kinds: [kind] }, undefined, take),
    groupsAfter(after, count),
    // Past the last group, round from the first to the rotation's own again: the groups before it
    // that the window reaches, then that group itself, whatever lies between.
    ...(after === '' ? [] : [groupsAfter('', count), groupsAfter(after, 1, true)]),
  ];
  const shares = (results: unknown[]) => {
    const [expired, ungroupedRows, later, fromFirst = [], itself = []] = results as [Array<{ id: number; job_group: string }>, CandidateRow[], ...Array<Array<{ job_group: string; running: number; spent: number }>>];
    const ungrouped = orderCandidates(ungroupedRows, take);
    const seen = new Set(later.map((row) => row.job_group));
    const wrapped = [...fromFirst.filter((row) => row.job_group < after), ...itself.filter((row) => row.job_group === after)].filter((row) => !seen.has(row.job_group));
    const roomOf = (row: { running: number; spent: number }) =>
      Math.min(groupConcurrency === null ? Infinity : groupConcurrency - Number(row.running), groupRate === null ? Infinity : groupRate.jobs - Number(row.spent));
    const groups = [...later, ...wrapped].slice(0, count).map((row) => ({ group: row.job_group, room: roomOf(row) }));
    const open = groups.filter((group) => group.room > 0);
    // At least two shares: groups the window did not reach may be waiting past a big one.
    const perGroup = sharePerGroup(take, Math.max(2, open.length + (ungrouped.length > 0 ? 1 : 0)));
    const statements = open.map(({ group, room }): Statement => [groupSql.groupJobsSql(table), [kind, group, Math.min(room, perGroup)]]);
    const fill = (jobRows: unknown[]) => {
      const jobs = new Map(open.map(({ group }, i) => [group, (jobRows[i] as Array<{ id: number; priority: number; job_group: string }>).map(toCandidate)]));
      return shareRoundRobin({
        expired: [...expired.map((row) => ({ id: Number(row.id), group: row.job_group })), ...ungrouped.filter((job) => job.priority === null).map((job) => ({ id: job.id, group: null }))],
        groups: groups.map(({ group, room }) => ({ group, room, jobs: jobs.get(group) ?? [] })),
        ungrouped: ungrouped.flatMap((job) => (job.priority === null ? [] : [{ id: job.id, priority: job.priority, group: null }])),
        take,
      });
    };
    return { statements, fill };
  };
  return { statements, shares };
}

const toCandidate = (row: { id: number; priority: number; job_group: string }): GroupedCandidate => ({ id: Number(row.id), priority: Number(row.priority), group: row.job_group });

/** The jobs the claim took of each limited kind it read apart, for limitWrites. */
export function spentApart(apart: KindsApart, locked: ReadonlyArray<LockedJob>): Spent[] {
  const taken = locked.filter((job) => apart.ids.has(job.id));
  return apart.limited.map((plan) => ({ plan, jobs: taken.filter((job) => job.kind === plan.kind) }));
}
