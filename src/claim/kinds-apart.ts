import type { Statement, Transaction } from '../db/transaction.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import { orderCandidates, type Candidate } from './candidate-order.js';
import { shareRoundRobin, sharePerGroup, type GroupedCandidate, type GroupRotation } from './fair-share.js';
import { kindsApart, type KindRules } from './kind-rules.js';
import * as claimSql from './sql/claim.js';
import type { CandidateRow } from './sql/claim.js';
import * as groupSql from './sql/groups.js';
import * as limitSql from './sql/limits.js';
import type { ClaimOptions } from './types.js';

/** The candidates a claim turn may take of the kinds it reads apart, and how to mark their limits taken. */
export interface KindsApart {
  candidates: Candidate[];
  /** The ids among them, for the lock to keep (kind-rules.ts, withinKindRules). */
  ids: ReadonlySet<number>;
}

const NONE: KindsApart = { candidates: [], ids: new Set() };

/** What the claim reads of one kind: up to `take` jobs, shared between its groups (under `groupConcurrency`) or oldest first. */
interface KindPlan {
  kind: string;
  take: number;
  grouped: boolean;
  groupConcurrency: number | null;
}

/** Groups read per claim of a grouped kind, for a claim of `take` jobs: twice as many, so that groups at their limit leave enough others. */
const groupsToRead = (take: number) => Math.min(200, Math.max(8, 2 * take));

/**
 * Of the kinds the claim reads apart (kind-rules.ts, kindsApart): for the limited ones, locks the
 * limit rows no other claim holds and counts each kind's running jobs (one round trip); then reads
 * up to the room under each limit of the kind's due jobs, at most `room` in all. A kind whose jobs
 * carry groups, or that has a limit per group, is shared round-robin between its groups
 * (fair-share.ts), from where `rotation` stands, within each group's limit (two more round trips:
 * the groups with due jobs and their running counts, then the groups' jobs); any other, expired
 * leases first, then by priority and age (one). The limit rows stay locked to the COMMIT.
 */
export async function candidatesOfKindsApart(tx: Transaction, table: QuotedIdentifier, claim: ClaimOptions, rules: KindRules | undefined, rotation: GroupRotation, room: number): Promise<KindsApart> {
  const kinds = kindsApart(claim, rules);
  if (rules === undefined || kinds.length === 0 || room <= 0) return NONE;
  const plans = await planKinds(tx, table, rules, kinds, room);
  if (plans.length === 0) return NONE;
  const grouped = plans.filter((plan) => plan.grouped);
  const oldest = plans.filter((plan) => !plan.grouped);
  const reads = oldest.map(({ kind, take }): Statement => claimSql.candidatesOldest(table, { kinds: [kind] }, undefined, take));
  const groupReads = grouped.map((plan) => groupHeads(table, plan, rotation));
  const results = await tx.run(...reads, ...groupReads.flatMap((read) => read.statements));
  const candidates = oldest.flatMap(({ take }, i) => orderCandidates(results[i] as CandidateRow[], take));
  let at = reads.length;
  const shares = groupReads.map((read) => read.shares(results.slice(at, (at += read.statements.length))));
  const jobReads = shares.flatMap((share) => share.statements);
  const jobResults = jobReads.length === 0 ? [] : await tx.run(...jobReads);
  at = 0;
  for (const [i, share] of shares.entries()) {
    const { candidates: fair, rotateTo } = share.fill(jobResults.slice(at, (at += share.statements.length)));
    if (rotateTo !== undefined) rotation.moveTo(grouped[i]!.kind, rotateTo);
    candidates.push(...fair);
  }
  return candidates.length === 0 ? NONE : { candidates, ids: new Set(candidates.map((candidate) => candidate.id)) };
}

/** How many jobs the claim reads of each kind: under the limits it could lock, in order, until `room` is spent. */
async function planKinds(tx: Transaction, table: QuotedIdentifier, rules: KindRules, kinds: readonly string[], room: number): Promise<KindPlan[]> {
  const limited = kinds.filter((kind) => rules.limited.includes(kind));
  const [locked, counted] = (limited.length === 0 ? [[], []] : await tx.run([limitSql.LOCK_LIMITS_SQL, [rules.queue, limited]], [limitSql.COUNT_RUNNING_SQL(table), [limited]])) as [
    Array<{ kind: string; concurrency: number | null; group_concurrency: number | null }>,
    Array<{ kind: string; running: number }>,
  ];
  const limits = new Map(locked.map((row) => [row.kind, row]));
  const running = new Map(counted.map((row) => [row.kind, Number(row.running)]));
  const plans: KindPlan[] = [];
  let left = room;
  for (const kind of kinds) {
    const limit = limits.get(kind);
    // A limited kind whose row another claim holds is that claim's to take this turn.
    if (limited.includes(kind) && limit === undefined) continue;
    const take = limit?.concurrency == null ? left : Math.min(left, Number(limit.concurrency) - (running.get(kind) ?? 0));
    if (take <= 0) continue;
    const groupConcurrency = limit?.group_concurrency == null ? null : Number(limit.group_concurrency);
    plans.push({ kind, take, grouped: groupConcurrency !== null || rules.grouped.includes(kind), groupConcurrency });
    left -= take;
    if (left === 0) break;
  }
  return plans;
}

/**
 * The first of a grouped kind's reads: its expired leases of jobs with a group, its jobs without
 * one (expired leases, then due ones by priority and age), and its groups with due jobs from where
 * the rotation stands (and, past the end, from the first group round to it again). `shares` then
 * says which jobs of which groups to read next, and `fill` shares them out.
 */
function groupHeads(table: QuotedIdentifier, plan: KindPlan, rotation: GroupRotation) {
  const { kind, take, groupConcurrency } = plan;
  const after = rotation.of(kind);
  const count = groupsToRead(take);
  const groupsAfter = (from: string): Statement => [groupSql.groupsAfterSql(table, groupConcurrency !== null), [kind, from, kind, count, ...(groupConcurrency !== null ? [kind] : [])]];
  const statements: Statement[] = [
    [groupSql.EXPIRED_IN_GROUPS_SQL(table), [kind, take]],
    claimSql.candidatesOldest(table, { kinds: [kind] }, undefined, take),
    groupsAfter(after),
    ...(after === '' ? [] : [groupsAfter('')]),
  ];
  const shares = (results: unknown[]) => {
    const [expired, ungroupedRows, later, fromFirst = []] = results as [Array<{ id: number; job_group: string }>, CandidateRow[], ...Array<Array<{ job_group: string; running: number }>>];
    const ungrouped = orderCandidates(ungroupedRows, take);
    const seen = new Set(later.map((row) => row.job_group));
    const wrapped = fromFirst.filter((row) => row.job_group <= after && !seen.has(row.job_group));
    const groups = [...later, ...wrapped].slice(0, count).map((row) => ({ group: row.job_group, room: groupConcurrency === null ? Infinity : groupConcurrency - Number(row.running) }));
    const open = groups.filter((group) => group.room > 0);
    const perGroup = sharePerGroup(take, open.length + (ungrouped.length > 0 ? 1 : 0));
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

/**
 * The write that marks the limit rows of the kinds a claim took jobs of under their limits, of the
 * jobs it locked (on Galera, what makes two nodes' claims conflict).
 */
export function touchLimits(rules: KindRules | undefined, locked: ReadonlyArray<{ id: number; kind: string | null }>, apart: ReadonlySet<number>): Statement[] {
  if (rules === undefined || apart.size === 0) return [];
  const kinds = new Set(locked.filter((job) => apart.has(job.id) && rules.limited.includes(job.kind!)).map((job) => job.kind!));
  return kinds.size === 0 ? [] : [[limitSql.TOUCH_LIMITS_SQL, [rules.queue, [...kinds]]]];
}
