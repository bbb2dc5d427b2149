import type { Transaction } from '../db/transaction.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import { rateWindow, settlingCount, type HeldBack, type KindPlan, type LimitRow, type LockedJob, type Room, type Spent } from './limit-spend.js';
import * as limitSql from './sql/limits.js';

/**
 * A limit on every kind together, stored as the kind `'*'` (limitSql.EVERY_KIND): at most so many
 * jobs of the queue running at once, or claimed per window, whatever their kind. Every claim
 * turn takes its row first (SKIP LOCKED: a claim that finds it held takes nothing and looks again
 * soon), so while it is set the queue's claims go one at a time, each counting what the one
 * before it committed.
 */
export interface TableLimit {
  /** How many jobs the claim may take. */
  room: number;
  heldBack?: HeldBack;
  /** What the claim spends under it (limitWrites); none when its row was another claim's. */
  plan?: KindPlan;
}

/**
 * Locks the limit's row unless another claim holds it, counts the running jobs of every kind
 * (less those the turn settles) and the jobs claimed within its rate's window: one round trip.
 * Held back `full` when no slot is left; a claim that takes the last ones fills it (`plan.fills`)
 * if it finds as many jobs.
 */
export async function roomUnderTableLimit(tx: Transaction, table: QuotedIdentifier, queue: string, room: Room): Promise<TableLimit> {
  const every = [limitSql.EVERY_KIND];
  const [read, locked, counted, rated, leaving = []] = (await tx.run(
    [limitSql.READ_LIMITS_SQL, [queue, every]],
    [limitSql.LOCK_LIMITS_SQL, [queue, every]],
    [limitSql.COUNT_ALL_RUNNING_SQL(table)],
    [limitSql.RATE_SPENT_SQL, [limitSql.RATE_MARGIN_MICROSECONDS, queue, every]],
    ...settlingCount(table, room.settling),
  )) as [LimitRow[], unknown[], Array<{ running: number }>, Array<{ spent: number }>, Array<{ settling: number }>?];
  const limit = read[0];
  if (limit === undefined || locked.length === 0) return { room: 0, heldBack: 'busy' };
  const running = Number(counted[0]?.running ?? 0) - leaving.reduce((sum, row) => sum + Number(row.settling), 0);
  const slots = limit.concurrency === null ? Infinity : Number(limit.concurrency) - running;
  const rate = rateWindow(limit.rate_jobs, limit.rate_seconds);
  const others = Math.min(room.limited, rate === null ? Infinity : rate.jobs - Number(rated[0]?.spent ?? 0));
  const take = Math.max(0, Math.min(slots, others));
  const plan: KindPlan = { kind: limitSql.EVERY_KIND, take, fills: slots <= others, grouped: false, limited: true, lockGroups: false, groupConcurrency: null, rate, groupRate: null };
  return { room: take, ...(slots <= 0 && { heldBack: 'full' as const }), plan };
}

/** The jobs a claim took under the limit on every kind: all it took. */
export function spentUnderTableLimit(limit: TableLimit | undefined, locked: readonly LockedJob[]): Spent[] {
  return limit?.plan === undefined ? [] : [{ plan: limit.plan, jobs: locked }];
}
