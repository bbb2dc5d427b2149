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

/**
 * Of the kinds the claim reads apart (kind-rules.ts, kindsApart): for the limited ones, reads the
 * limits, locks the rows no other claim holds of kinds limited as a whole, and counts each kind's
 * running jobs and the jobs claimed within its rate's window (one round trip); then reads up to
 * the room under each limit of the kind's due jobs, each kind's taken in turn with the others', at
 * most `room.all` in all (`room.limited` of limited kinds). A kind whose jobs carry groups, or
 * that has a limit per group, is shared round-robin between its groups (fair-share.ts), from
 * where `rotation` stands, within each group's limits (two more round trips: the groups with
 * waiting jobs, then their limits, locking their rows for a kind limited per group only, and
 * their jobs); any other, expired leases first, then by priority and age (one). The rows locked
 * stay locked to the COMMIT.
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
  for (const share of shares) byKind.push(share.fill(jobResults.slice(at, (at += share.statements.length))));
  // A kind this claim may fill is filled only if it has more jobs waiting than the claim takes.
  const filled = [...oldest, ...grouped].some((plan, i) => plan.fills && byKind[i]!.length >= plan.take);
  const held = heldBack ?? (filled ? 'full' : undefined);
  // Each kind's candidates in turn with the others': a kind with many jobs does not fill the batch.
  const candidates = takeInTurn(byKind, room.all);
  if (candidates.length === 0) return none(held);
  return { candidates, ids: new Set(candidates.map((candidate) => candidate.id)), limited: plans.filter((plan) => plan.limited), ...(held !== undefined && { heldBack: held }) };
}

/** How many jobs the claim reads of each kind: at most its room, and no more than the limits it could lock leave. */
async function planKinds(tx: Transaction, table: QuotedIdentifier, rules: KindRules, kinds: readonly string[], room: Room): Promise<{ plans: KindPlan[]; heldBack?: HeldBack }> {
  const limited = kinds.filter((kind) => rules.limited.includes(kind));
  const { settling } = room;
  const [read, locked, counted, rated, leaving = []] = (
    limited.length === 0
      ? [[], [], [], []]
      : await tx.run(
          [limitSql.READ_LIMITS_SQL, [rules.queue, limited]],
          [limitSql.LOCK_LIMITS_SQL, [rules.queue, limited]],
          [limitSql.COUNT_RUNNING_SQL(table), [rules.queue, limited]],
          [limitSql.RATE_SPENT_SQL, [limitSql.RATE_MARGIN_MICROSECONDS, rules.queue, limited]],
          ...settlingCount(table, settling),
        )
  ) as [LimitRow[], Array<{ kind: string }>, Array<{ kind: string; running: number }>, Array<{ kind: string; spent: number }>, Array<{ kind: string; settling: number }>?];
  const held = new Set(locked.map((row) => row.kind));
  // A kind limited as a whole is read under its row, one limited per group only under its groups'.
  const limits = new Map(read.filter((row) => held.has(row.kind) || limitSql.limitedPerGroupOnly(row)).map((row) => [row.kind, row]));
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
    const groupConcurrency = limit?.group_concurrency == null ? null : Number(limit.group_concurrency);
    const groupRate = rateWindow(limit?.group_rate_jobs, limit?.group_rate_seconds);
    const grouped = groupConcurrency !== null || groupRate !== null || rules.grouped.includes(kind);
    const rate = rateWindow(limit?.rate_jobs, limit?.rate_seconds);
    const slots = limit?.concurrency == null ? Infinity : Number(limit.concurrency) - (running.get(kind) ?? 0);
    const others = Math.min(limit === undefined ? room.all : room.limited, rate === null ? Infinity : rate.jobs - (spent.get(kind) ?? 0));
    const take = Math.min(slots, others);
    if (take <= 0) {
      if (slots <= 0) heldBack ??= 'full';
      continue;
    }
    const lockGroups = limit !== undefined && limitSql.limitedPerGroupOnly(limit);
    plans.push({ kind, take, fills: slots <= others, grouped, limited: limit !== undefined, lockGroups, groupConcurrency, rate, groupRate });
  }
  return { plans, ...(heldBack !== undefined && { heldBack }) };
}

/**
 * The first of a grouped kind's reads: its expired leases of jobs with a group, its jobs without
 * one (expired leases, then due ones by priority and age), and its groups with due jobs from where
 * the rotation stands (and, past the end, from the first group round to it again). `shares` then
 * says what to read next: under limits per group, each group's running jobs and the jobs claimed
 * within its rate's window, after locking the groups' rows when the kind is limited per group only
 * (adding those missing); and the groups' due jobs. `fill` shares them out.
 */
function groupHeads(table: QuotedIdentifier, queue: string, plan: KindPlan, rotation: GroupRotation) {
  const { kind, take, lockGroups, groupConcurrency, groupRate } = plan;
  const count = rotation.groupsToRead(kind, take);
  // The groups the last read found past the rotation's own, then dives for the rest after them.
  const known = rotation.seenAhead(kind, count);
  const from = known.at(-1)?.group ?? rotation.of(kind);
  const dives = count - known.length;
  const locks = lockGroups ? [queue, kind] : [];
  const chain = dives > 0 ? groupSql.groupChainSql(table, dives, lockGroups) : [];
  const statements: Statement[] = [
    [groupSql.expiredInGroupsSql(table, lockGroups), [...locks, kind, take]],
    claimSql.candidatesOldest(table, { kinds: [kind] }, undefined, take),
    ...(chain.length === 0
      ? []
      : [[chain[0]!, [kind, from]] satisfies Statement, ...chain.slice(1, -1).map((sql): Statement => [sql, [kind, kind]]), [chain.at(-1)!, locks] satisfies Statement]),
  ];
  const shares = (results: unknown[]) => {
    type GroupRow = { job_group: string | null; locks: number };
    const [expired, ungroupedRows] = results as [Array<GroupRow & { id: number; job_group: string }>, CandidateRow[]];
    const ungrouped = orderCandidates(ungroupedRows, take);
    const round: Array<GroupRow & { job_group: string }> = known.map(({ group, locks }) => ({ job_group: group, locks: locks ? 1 : 0 }));
    if (chain.length > 0) {
      // The groups after the last one known, round to the rotation's own again: the chain starts
      // at it if it still has waiting jobs, and stops where it comes round.
      const [first, ...next] = results.at(-1) as GroupRow[];
      for (const row of first === undefined || first.job_group === null || first.job_group === from ? next : [first, ...next]) {
        if (row === undefined || row.job_group === null || round.some((seen) => seen.job_group === row.job_group)) break;
        round.push(row as GroupRow & { job_group: string });
      }
      rotation.sawGroups(kind, known.length + dives + 1, round.length);
    }
    const groups = round.map((row) => row.job_group);
    const read = round.map((row) => ({ group: row.job_group, locks: Number(row.locks) === 1 }));
    // The groups whose limits the claim must know: those it reads, and those of expired leases.
    const limits = groupLimitReads(table, queue, plan, [...expired, ...round]);
    const perGroup = sharePerGroup(take, groups.length + (ungrouped.length > 0 ? 1 : 0));
    const most = Math.min(perGroup, groupConcurrency ?? Infinity, groupRate?.jobs ?? Infinity);
    const jobsRead: Statement[] = groups.length === 0 ? [] : [[groupSql.groupJobsSql(table, groups.length), groups.flatMap((group) => [kind, group, most])]];
    const statements = [...limits.statements, ...jobsRead];
    const fill = (rows: unknown[]) => {
      const roomOf = limits.rooms(rows.slice(0, limits.statements.length));
      const jobsOf = new Map<string, GroupedCandidate[]>();
      for (const row of (rows[limits.statements.length] ?? []) as Array<{ id: number; priority: number; job_group: string }>) {
        const jobs = jobsOf.get(row.job_group);
        if (jobs === undefined) jobsOf.set(row.job_group, [toCandidate(row)]);
        else jobs.push(toCandidate(row));
      }
      // A union's rows come part after part on both servers, but only the order of each part's
      // LIMIT is promised: priority order is kept whatever comes (the sort is stable).
      for (const jobs of jobsOf.values()) jobs.sort((a, b) => a.priority - b.priority);
      const elsewhere = [...new Set(expired.map((row) => row.job_group))].filter((group) => !groups.includes(group));
      const roundRead = groups.map((group) => ({ group, room: roomOf(group), jobs: jobsOf.get(group) ?? [] }));
      const { candidates, rotateTo } = shareRoundRobin({
        expired: [...expired.map((row) => ({ id: Number(row.id), group: row.job_group })), ...ungrouped.filter((job) => job.priority === null).map((job) => ({ id: job.id, group: null }))],
        groups: [...elsewhere.map((group) => ({ group, room: roomOf(group), jobs: [] })), ...roundRead],
        ungrouped: ungrouped.flatMap((job) => (job.priority === null ? [] : [{ id: job.id, priority: job.priority, group: null }])),
        take,
      });
      rotation.sawHeld(kind, roundRead.filter(({ room }) => room <= 0).length);
      if (rotateTo !== undefined) rotation.moveTo(kind, rotateTo, read);
      return candidates;
    };
    return { statements, fill };
  };
  return { statements, shares };
}

/**
 * What a claim reads of its groups' limits: nothing without limits per group; else the rows of
 * groups limited per group only, locked (those missing added first), and each group's running
 * jobs and jobs claimed within its rate's window, read after. `rooms` says how many more jobs
 * each group may take: none of a group whose row another claim holds.
 */
function groupLimitReads(table: QuotedIdentifier, queue: string, plan: KindPlan, rows: ReadonlyArray<{ job_group: string; locks: number }>) {
  const { kind, lockGroups, groupConcurrency, groupRate } = plan;
  const groups = [...new Set(rows.map((row) => row.job_group))];
  if ((groupConcurrency === null && groupRate === null) || groups.length === 0) return { statements: [], rooms: () => () => Infinity };
  const missing = lockGroups ? [...new Set(rows.filter((row) => Number(row.locks) === 0).map((row) => row.job_group))].sort() : [];
  const statements: Statement[] = [
    ...(missing.length === 0 ? [] : [[groupSql.addGroupLocksSql(missing.length), missing.flatMap((group) => [queue, kind, group])] satisfies Statement]),
    ...(lockGroups ? [[groupSql.LOCK_GROUPS_SQL, [queue, kind, groups]] satisfies Statement] : []),
    ...(groupConcurrency === null ? [] : [[groupSql.RUNNING_BY_GROUP_SQL(table), [kind, groups]] satisfies Statement]),
    ...(groupRate === null ? [] : [[groupSql.SPENT_BY_GROUP_SQL, [queue, kind, groups, groupRate.windowUs]] satisfies Statement]),
  ];
  const rooms = (results: unknown[]) => {
    let at = missing.length === 0 ? 0 : 1;
    const held = lockGroups ? new Set((results[at++] as Array<{ job_group: string }>).map((row) => row.job_group)) : undefined;
    const running = groupConcurrency === null ? undefined : new Map((results[at++] as Array<{ job_group: string; running: number }>).map((row) => [row.job_group, Number(row.running)]));
    const spent = groupRate === null ? undefined : new Map((results[at++] as Array<{ job_group: string; spent: number }>).map((row) => [row.job_group, Number(row.spent)]));
    return (group: string) =>
      held !== undefined && !held.has(group)
        ? 0
        : Math.min(groupConcurrency === null ? Infinity : groupConcurrency - (running!.get(group) ?? 0), groupRate === null ? Infinity : groupRate.jobs - (spent!.get(group) ?? 0));
  };
  return { statements, rooms };
}

const toCandidate = (row: { id: number; priority: number; job_group: string }): GroupedCandidate => ({ id: Number(row.id), priority: Number(row.priority), group: row.job_group });

/** The jobs the claim took of each limited kind it read apart, for limitWrites. */
export function spentApart(apart: KindsApart, locked: ReadonlyArray<LockedJob>): Spent[] {
  const taken = locked.filter((job) => apart.ids.has(job.id));
  return apart.limited.map((plan) => ({ plan, jobs: taken.filter((job) => job.kind === plan.kind) }));
}
