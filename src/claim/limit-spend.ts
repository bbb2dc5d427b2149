import type { Statement } from '../db/transaction.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import * as groupSql from './sql/groups.js';
import * as limitSql from './sql/limits.js';

/**
 * What a claim takes under limits and writes for them, whether the limit is a kind's
 * (kinds-apart.ts) or on every kind together (table-limit.ts).
 */

/**
 * How many jobs a claim may take: `all`, and of limited kinds `limited`, those its worker can
 * start at once (a job in hand but not started would hold a slot, or spend a rate, while it
 * waits); and the jobs whose slots its COMMIT frees.
 */
export interface Room {
  all: number;
  limited: number;
  /** The jobs the turn settles with its COMMIT, by id and the token of their claim: their slots are free for it. */
  settling: ReadonlyArray<readonly [number, Buffer]>;
}

/**
 * What held a claim back under limits: `busy`, another claim held a limit row (it may have left
 * room: look again soon); `full`, a concurrency limit was reached, or is once the claim commits (a
 * slot frees when a job ends, which its own worker's next turn takes).
 */
export type HeldBack = 'busy' | 'full';

/** A rate as a claim applies it: jobs per window, in microseconds. */
export interface RateWindow {
  jobs: number;
  windowUs: number;
}

/**
 * What the claim reads of one kind: up to `take` jobs, shared between its groups (within the
 * limits per group) or oldest first; and, under a limit, which rates its claims spend.
 */
export interface KindPlan {
  kind: string;
  take: number;
  /** The claim takes the last slots of the kind's concurrency limit if it finds `take` jobs. */
  fills: boolean;
  grouped: boolean;
  limited: boolean;
  /** Limited per group only: the claim takes its jobs under the rows of their groups (sql/groups.ts), not the kind's. */
  lockGroups: boolean;
  groupConcurrency: number | null;
  rate: RateWindow | null;
  groupRate: RateWindow | null;
}

/** A limit row as the claim locks it. */
export type LimitRow = Record<(typeof limitSql.LIMIT_COLUMNS)[number], number | null> & { kind: string };

/** A locked job, as far as limits care. */
export type LockedJob = { id: number; kind: string | null; group: string | null };

/** The jobs a claim took under one limit. */
export interface Spent {
  plan: KindPlan;
  jobs: readonly LockedJob[];
}

export function rateWindow(jobs: number | null | undefined, perSeconds: number | null | undefined): RateWindow | null {
  return jobs == null || perSeconds == null ? null : { jobs: Number(jobs), windowUs: Number(perSeconds) * 1e6 + limitSql.RATE_MARGIN_MICROSECONDS };
}

/** Counts the running jobs the turn settles, by kind, if there are any. */
export function settlingCount(table: QuotedIdentifier, settling: Room['settling']): Statement[] {
  return settling.length === 0 ? [] : [[limitSql.COUNT_SETTLING_SQL(table), [settling.map(([id]) => id), settling]]];
}

/**
 * What a claim writes for the limits it took jobs under: their rows, or those of the groups it
 * took jobs of (on Galera, what makes two nodes' claims conflict), and for limits with a rate the
 * jobs it took, kind-wide and per group, with the claims no window reaches any more forgotten.
 */
export function limitWrites(queue: string, spent: readonly Spent[]): Statement[] {
  const taken = spent.filter(({ jobs }) => jobs.length > 0);
  if (taken.length === 0) return [];
  const logged: unknown[][] = [];
  const forget: Statement[] = [];
  const touchGroups: Statement[] = [];
  for (const { plan, jobs } of taken) {
    if (plan.lockGroups) touchGroups.push([groupSql.TOUCH_GROUPS_SQL, [queue, plan.kind, [...new Set(jobs.flatMap(({ group }) => (group === null ? [] : [group])))]]]);
    const { kind, rate, groupRate } = plan;
    if (rate !== null) logged.push([queue, kind, '', jobs.length]);
    if (groupRate !== null) {
      const byGroup = new Map<string, number>();
      for (const { group } of jobs) if (group !== null) byGroup.set(group, (byGroup.get(group) ?? 0) + 1);
      for (const [group, count] of byGroup) logged.push([queue, kind, group, count]);
    }
    if (rate !== null || groupRate !== null) forget.push([limitSql.FORGET_RATE_CLAIMS_SQL, [queue, kind, Math.max(rate?.windowUs ?? 0, groupRate?.windowUs ?? 0)]]);
  }
  const kindRows = taken.filter(({ plan }) => !plan.lockGroups).map(({ plan }) => plan.kind);
  return [
    ...(kindRows.length === 0 ? [] : [[limitSql.TOUCH_LIMITS_SQL, [queue, kindRows]] satisfies Statement]),
    ...touchGroups,
    ...(logged.length === 0 ? [] : [[limitSql.logRateClaimsSql(logged.length), logged.flat()] satisfies Statement]),
    ...forget,
  ];
}
