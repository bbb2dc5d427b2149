import type { QuotedIdentifier } from '../config/identifiers.js';
import { checkNumber, LIMIT_OPTIONS } from '../config/options.js';
import type { Database } from '../db/database.js';
import { ExitCode, JobqError } from '../errors.js';
import * as limitSql from '../claim/sql/limits.js';
import { checkKind } from './new-jobs.js';

/** A limit on the jobs of a kind, held by every worker of the queue on every machine. */
export interface KindLimit {
  /** Most jobs of the kind running at once, counted across every worker: from a claim until the job is settled or its lease runs out. */
  concurrency: number;
}

/** A kind's limit as it stands, with the jobs of the kind running now. */
export interface KindLimitStatus extends KindLimit {
  kind: string;
  running: number;
}

/** Sets or changes a kind's limit; a one-line error for a bad kind or value, and nothing changed. */
export async function setLimit(db: Database, queue: string, kind: string, limit: KindLimit): Promise<void> {
  checkKind(kind);
  if (typeof limit !== 'object' || limit === null) throw new JobqError('a limit is an object like { concurrency: 10 }', ExitCode.usage);
  const unknown = Object.keys(limit).find((key) => !(key in LIMIT_OPTIONS));
  if (unknown !== undefined) throw new JobqError(`unknown limit ${JSON.stringify(unknown)}; a limit may have ${Object.keys(LIMIT_OPTIONS).join(', ')}`, ExitCode.usage);
  if (limit.concurrency === undefined) throw new JobqError('a limit needs concurrency, e.g. { concurrency: 10 }', ExitCode.usage);
  const concurrency = checkNumber(LIMIT_OPTIONS.concurrency, limit.concurrency);
  await db.query(limitSql.SET_LIMIT_SQL, [queue, kind, concurrency, concurrency]);
}

/** Removes a kind's limit; whether it had one. */
export async function removeLimit(db: Database, queue: string, kind: string): Promise<boolean> {
  const result = await db.query<{ affectedRows: number }>(limitSql.REMOVE_LIMIT_SQL, [queue, checkKind(kind)]);
  return result.affectedRows > 0;
}

/** The queue's limits by kind, with the jobs of each kind running now. */
export async function readLimits(db: Database, table: QuotedIdentifier, queue: string): Promise<KindLimitStatus[]> {
  const rows = await db.query<Array<{ kind: string; concurrency: number; running: number }>>(limitSql.LIMITS_SQL(table), [queue]);
  return rows.map((row) => ({ kind: row.kind, concurrency: Number(row.concurrency), running: Number(row.running) }));
}
