import type { QuotedIdentifier } from '../config/identifiers.js';
import { checkNumber, LIMIT_OPTIONS } from '../config/options.js';
import { checkRate, type Rate } from '../config/rate.js';
import type { KindLimit, KindLimitStatus } from './types.js';
import type { Database } from '../db/database.js';
import { ExitCode, JobqError } from '../errors.js';
import * as limitSql from '../claim/sql/limits.js';
import { checkKind } from './new-jobs.js';

export const { EVERY_KIND } = limitSql;

const LIMIT_NAMES = ['concurrency', 'groupConcurrency', 'rate', 'groupRate'] as const;

/** A kind a limit may be set on: a kind's name, or `*` for every kind together. */
export const checkLimitKind = (kind: unknown, position?: string): string => (kind === EVERY_KIND ? kind : checkKind(kind, position));

/** Sets a kind's limits, or changes them (those not given are lifted); a one-line error for a bad kind or value, and nothing changed. */
export async function setLimit(db: Database, queue: string, kind: string, limit: KindLimit): Promise<void> {
  checkLimitKind(kind);
  if (typeof limit !== 'object' || limit === null) throw new JobqError('a limit is an object like { concurrency: 10 }', ExitCode.usage);
  const names = LIMIT_NAMES.join(', ');
  const unknown = Object.keys(limit).find((key) => !(LIMIT_NAMES as readonly string[]).includes(key));
  if (unknown !== undefined) throw new JobqError(`unknown limit ${JSON.stringify(unknown)}; a limit may have ${names}`, ExitCode.usage);
  const number = (name: keyof typeof LIMIT_OPTIONS) => (limit[name] === undefined ? null : checkNumber(LIMIT_OPTIONS[name], limit[name]));
  const rate = (name: 'rate' | 'groupRate') => (limit[name] === undefined ? null : checkRate(limit[name], name));
  const [concurrency, groupConcurrency, kindRate, groupRate] = [number('concurrency'), number('groupConcurrency'), rate('rate'), rate('groupRate')];
  if ([concurrency, groupConcurrency, kindRate, groupRate].every((value) => value === null)) {
    throw new JobqError(`a limit needs one of ${names}, e.g. { concurrency: 10 }`, ExitCode.usage);
  }
  if (kind === EVERY_KIND && (groupConcurrency !== null || groupRate !== null)) {
    throw new JobqError(`a limit on every kind ("${EVERY_KIND}") takes concurrency and rate; set limits per group on a kind`, ExitCode.usage);
  }
  const values = [concurrency, groupConcurrency, kindRate?.jobs ?? null, kindRate?.perSeconds ?? null, groupRate?.jobs ?? null, groupRate?.perSeconds ?? null];
  await db.query(limitSql.SET_LIMIT_SQL, [queue, kind, ...values]);
}

/** Removes a kind's limit; whether it had one. */
export async function removeLimit(db: Database, queue: string, kind: string): Promise<boolean> {
  const result = await db.query<{ affectedRows: number }>(limitSql.REMOVE_LIMIT_SQL, [queue, checkLimitKind(kind)]);
  return result.affectedRows > 0;
}

/** The queue's limits by kind, with the jobs of each kind running now. */
export async function readLimits(db: Database, table: QuotedIdentifier, queue: string): Promise<KindLimitStatus[]> {
  type Row = Record<(typeof limitSql.LIMIT_COLUMNS)[number], number | null> & { kind: string; running: number };
  const rows = await db.query<Row[]>(limitSql.LIMITS_SQL(table), [queue]);
  return rows.map((row) => ({
    kind: row.kind,
    concurrency: orNull(row.concurrency),
    groupConcurrency: orNull(row.group_concurrency),
    rate: rateOf(row.rate_jobs, row.rate_seconds),
    groupRate: rateOf(row.group_rate_jobs, row.group_rate_seconds),
    running: Number(row.running),
  }));
}

const orNull = (value: number | null) => (value === null ? null : Number(value));
const rateOf = (jobs: number | null, perSeconds: number | null): Rate | null => (jobs === null || perSeconds === null ? null : { jobs: Number(jobs), perSeconds: Number(perSeconds) });
