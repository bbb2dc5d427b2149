import type { Database } from '../db/database.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import { ExitCode, JobqError } from '../errors.js';
import { checkKind } from './new-jobs.js';
import { JOB_STATUSES, type JobStatus } from './types.js';
import * as searchSql from './sql/job-search.js';
import { checkJobId } from './job-info.js';

/** What to look for: an id, a key, or a kind, group and status (each optional; a group needs its kind); and the page. */
export interface JobSearch {
  id?: number;
  key?: string;
  kind?: string;
  group?: string;
  status?: JobStatus;
  /** Jobs per page, 1 to 500 (default 50), and how many to skip, at most 10,000. */
  limit?: number;
  offset?: number;
}

/** A job as a search lists it. */
export interface FoundJob {
  id: number;
  kind: string | null;
  group: string | null;
  status: JobStatus;
  priority: number;
  attempts: number;
  createdAt: Date;
  /** Waiting: when it is due; running: its lease end; ended: when it ended. */
  runAfter: Date;
  /** The first 200 characters of its last error, and of its payload's JSON. */
  lastError: string | null;
  payloadPreview: string | null;
}

const MAX_LIMIT = 500;
const MAX_OFFSET = 10_000;

/** A page of the jobs the search names (the order of each sort of search: sql/job-search.ts). */
export async function findJobs(db: Database, table: QuotedIdentifier, search: JobSearch): Promise<FoundJob[]> {
  const limit = pageNumber(search.limit ?? 50, 'limit', 1, MAX_LIMIT);
  const offset = pageNumber(search.offset ?? 0, 'offset', 0, MAX_OFFSET);
  let statement: readonly [string, unknown[]];
  if (search.id !== undefined) {
    checkJobId(search.id);
    statement = [searchSql.JOB_BY_ID_SQL(table), [search.id]];
  } else if (search.key !== undefined) {
    if (typeof search.key !== 'string' || search.key === '') throw new JobqError('a key to search for is a non-empty string', ExitCode.usage);
    statement = [searchSql.JOBS_BY_KEY_SQL(table), [search.key, search.key]];
  } else {
    if (search.status !== undefined && !JOB_STATUSES.includes(search.status)) {
      throw new JobqError(`status must be one of ${JOB_STATUSES.join(', ')}, not ${JSON.stringify(search.status)}`, ExitCode.usage);
    }
    if (search.group !== undefined && search.kind === undefined) throw new JobqError('a search by group needs the kind too: groups belong to a kind', ExitCode.usage);
    if (search.kind !== undefined) checkKind(search.kind, 'search');
    statement = searchSql.jobsInRangeSql(table, search, JOB_STATUSES, limit, offset);
  }
  const rows = await db.query<Array<{ id: number; kind: string | null; job_group: string | null; status: JobStatus; priority: number; attempts: number; created_at: string; run_after: string; last_error: string | null; payload_preview: string | null }>>(...statement);
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    group: row.job_group,
    status: row.status,
    priority: row.priority,
    attempts: row.attempts,
    createdAt: new Date(Number(row.created_at) * 1000),
    runAfter: new Date(Number(row.run_after) * 1000),
    lastError: row.last_error,
    payloadPreview: row.payload_preview,
  }));
}

/** Makes these delayed jobs due now; returns how many were delayed (the others are left as they are). */
export async function runNow(db: Database, table: QuotedIdentifier, ids: readonly number[]): Promise<number> {
  for (const id of ids) checkJobId(id);
  if (ids.length === 0) return 0;
  const result = await db.query<{ affectedRows: number }>(searchSql.RUN_NOW_SQL(table), [ids]);
  return result.affectedRows;
}

function pageNumber(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new JobqError(`${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`, ExitCode.usage);
  }
  return value;
}
