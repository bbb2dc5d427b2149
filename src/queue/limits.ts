import type { QuotedIdentifier } from '../config/identifiers.js';
import { checkNumber, LIMIT_OPTIONS } from '../config/options.js';
import type { Database } from '../db/database.js';
import { ExitCode, JobqError } from '../errors.js';
import * as limitSql from '../claim/sql/limits.js';
import { checkKind } from './new-jobs.js';

/**
 * Limits on the jobs of a kind, held by every worker of the queue on every machine. A job runs
 * from its claim until it is settled or its lease runs out.
 */
export interface KindLimit {
  /** Most jobs of the kind running at once, counted across every worker. */
  concurrency?: number;
  /** Most jobs of each group of the kind running at once (see `group` in the enqueue options). */
  groupConcurrency?: number;
}

/** A kind's limits as they stand (null: none of that sort), with the jobs of the kind running now. */
export interface KindLimitStatus {
  kind: string;
  concurrency: number | null;
  groupConcurrency: number | null;
  running: number;
}

/** Sets a kind's limits, or changes them (those not given are lifted); a one-line error for a bad kind or value, and nothing changed. */
export async function setLimit(db: Database, queue: string, kind: string, limit: KindLimit): Promise<void> {
  checkKind(kind);
  if (typeof limit !== 'object' || limit === null) throw new JobqError('a limit is an object like { concurrency: 10 }', ExitCode.usage);
  const names = Object.keys(LIMIT_OPTIONS).join(', ');
  const unknown = Object.keys(limit).find((key) => !(key in LIMIT_OPTIONS));
  if (unknown !== undefined) throw new JobqError(`unknown limit ${JSON.stringify(unknown)}; a limit may have ${names}`, ExitCode.usage);
  const given = (name: keyof typeof LIMIT_OPTIONS) => (limit[name] === undefined ? null : checkNumber(LIMIT_OPTIONS[name], limit[name]));
  const [concurrency, groupConcurrency] = [given('concurrency'), given('groupConcurrency')];
  if (concurrency === null && groupConcurrency === null) throw new JobqError(`a limit needs one of ${names}, e.g. { concurrency: 10 }`, ExitCode.usage);
  await db.query(limitSql.SET_LIMIT_SQL, [queue, kind, concurrency, groupConcurrency]);
}

/** Removes a kind's limit; whether it had one. */
export async function removeLimit(db: Database, queue: string, kind: string): Promise<boolean> {
  const result = await db.query<{ affectedRows: number }>(limitSql.REMOVE_LIMIT_SQL, [queue, checkKind(kind)]);
  return result.affectedRows > 0;
}

/** The queue's limits by kind, with the jobs of each kind running now. */
export async function readLimits(db: Database, table: QuotedIdentifier, queue: string): Promise<KindLimitStatus[]> {
  const rows = await db.query<Array<{ kind: string; concurrency: number | null; group_concurrency: number | null; running: number }>>(limitSql.LIMITS_SQL(table), [queue]);
  const orNull = (value: number | null) => (value === null ? null : Number(value));
  return rows.map((row) => ({ kind: row.kind, concurrency: orNull(row.concurrency), groupConcurrency: orNull(row.group_concurrency), running: Number(row.running) }));
}
