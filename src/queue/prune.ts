import type { Database } from '../db/database.js';
import { parseDuration } from '../config/duration.js';
import { ExitCode, JobqError } from '../errors.js';
import * as groupSql from '../claim/sql/groups.js';
import * as keySql from './sql/job-keys.js';
import * as pruneSql from './sql/prune.js';
import * as uniqueSql from './sql/unique-jobs.js';
import { counterShard, keepRowCount } from '../claim/kept-counts.js';
import type { Statement } from '../db/transaction.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/** Which finished jobs to delete: those that ended longer ago than this (`7d`, `12h`, or seconds). */
export interface PruneOptions {
  doneOlderThan?: string | number;
  /** Failed jobs, and cancelled ones. */
  failedOlderThan?: string | number;
  /**
   * Told after each chunk what has been deleted so far, and how many of the jobs to delete are
   * left (counted first, one read of the index range; not told while keys are pruned).
   */
  onProgress?: (soFar: Readonly<PruneResult>, left: number | undefined) => void;
}

export interface PruneResult {
  done: number;
  failed: number;
  cancelled: number;
  /** Rows of jobq_job_keys whose job is gone (a partitioned table's keys; see sql/job-keys.ts). */
  keys: number;
  /** Windows of unique keys that ended (unique.windowSeconds; see sql/unique-jobs.ts). */
  windows: number;
  /** Rows of groups of kinds limited per group that have no job waiting or running (claim/sql/groups.ts). */
  groups: number;
  /** DELETE statements it took. */
  chunks: number;
}

// Each DELETE names at most this many rows by primary key. Measured on the 2-core bench machine
// (MariaDB 10.11, 200,000 done jobs): 18 ms per chunk of 1,000, read and delete together, well
// under the 100 ms that a claim waiting behind it should ever be held up.
const CHUNK = 1000;

/**
 * Deletes done, failed and cancelled jobs that ended before the cuts, oldest first, a chunk per transaction:
 * no long transaction, no big lock set, and workers claim on between them. With `partitioned`,
 * then prunes the keys of gone jobs (sql/job-keys.ts); then the rows of groups with no job
 * waiting or running (claim/sql/groups.ts), and the windows of unique keys that ended.
 */
export async function pruneJobs(db: Database, target: { name: string; quoted: QuotedIdentifier }, options: PruneOptions & { partitioned?: boolean }): Promise<PruneResult> {
  const table = target.quoted;
  const counters = { queue: target.name, shard: counterShard(undefined) };
  const result: PruneResult = { done: 0, failed: 0, cancelled: 0, keys: 0, windows: 0, groups: 0, chunks: 0 };
  const cuts = [
    ['done', options.doneOlderThan, 'doneOlderThan'],
    ['failed', options.failedOlderThan, 'failedOlderThan'],
    ['cancelled', options.failedOlderThan, 'failedOlderThan'],
  ] as const;
  const ages = cuts.map(([status, age, what]) => [status, age === undefined ? undefined : parseDuration(age, what)] as const);
  if (ages.every(([, age]) => age === undefined)) {
    throw new JobqError('prune needs doneOlderThan and/or failedOlderThan, e.g. { doneOlderThan: "7d" }', ExitCode.usage);
  }
  const cutsToPrune = ages.flatMap(([status, seconds]) => (seconds === undefined ? [] : [[status, Math.round(seconds * 1e6)] as const]));
  let toDelete = 0;
  if (options.onProgress !== undefined) {
    for (const [status, ageMicroseconds] of cutsToPrune) toDelete += Number((await db.query<Array<{ count: number }>>(pruneSql.COUNT_ENDED_BEFORE_SQL(table), [status, ageMicroseconds]))[0]?.count ?? 0);
  }
  for (const [status, ageMicroseconds] of cutsToPrune) {
    for (;;) {
      const rows = await db.query<Array<{ id: number; kind: string | null }>>(pruneSql.ENDED_BEFORE_SQL(table), [status, ageMicroseconds, CHUNK]);
      if (rows.length === 0) break;
      const byKind = new Map<string | null, number[]>();
      for (const { id, kind } of rows) {
        const ids = byKind.get(kind);
        if (ids === undefined) byKind.set(kind, [id]);
        else ids.push(id);
      }
      const count = `${status}_jobs` as const;
      const statements = [...byKind].flatMap(([kind, ids]): Statement[] => [
        [pruneSql.DELETE_ENDED_SQL(table), [ids, status]],
        keepRowCount(counters, { kind, count, sign: -1 }),
      ]);
      const results = await db.transaction((tx) => tx.commitWith(...statements));
      result[status] += results.reduce((sum: number, each, i) => sum + (i % 2 === 0 ? (each as { affectedRows: number }).affectedRows : 0), 0);
      result.chunks++;
      // Jobs that end while it runs join the range: what is left never goes below none.
      options.onProgress?.(result, Math.max(0, toDelete - result.done - result.failed - result.cancelled));
      if (rows.length < CHUNK) break;
    }
  }
  const chunked = inChunks(db, result, options.onProgress);
  // The keys of a partitioned table's gone jobs: enqueueing a key again also frees it; this keeps
  // jobq_job_keys from growing by a row for every job ever queued.
  if (options.partitioned === true) await chunked('keys', [keySql.KEYS_AFTER_SQL, [target.name]], (keys) => [keySql.FORGET_KEYS_OF_GONE_JOBS_SQL(table), [target.name, keys]]);
  for (const { kind } of await db.query<Array<{ kind: string }>>(groupSql.GROUP_LOCK_KINDS_SQL, [target.name])) {
    await chunked('groups', [groupSql.GROUP_LOCKS_AFTER_SQL, [target.name, kind]], (groups) => [groupSql.FORGET_IDLE_GROUP_LOCKS_SQL(table), [target.name, kind, groups]]);
  }
  for (;;) {
    const deleted = await db.query<{ affectedRows: number }>(uniqueSql.DELETE_ENDED_WINDOWS_SQL, [target.name, CHUNK]);
    if (deleted.affectedRows === 0) break;
    result.windows += deleted.affectedRows;
    result.chunks++;
    options.onProgress?.(result, undefined);
  }
  return result;
}

/**
 * Deletes rows a chunk at a time, walking them in key order: the read selects the next chunk's
 * keys (its params, then the last key read and the chunk's size), `forget` deletes those of them
 * that should go; what it deleted is added to `result[field]`.
 */
function inChunks(db: Database, result: PruneResult, onProgress: PruneOptions['onProgress']) {
  return async (field: 'keys' | 'groups', [sql, params]: readonly [string, unknown[]], forget: (values: string[]) => Statement): Promise<void> => {
    for (let after = ''; ; ) {
      const rows = await db.query<Array<Record<string, string>>>(sql, [...params, after, CHUNK]);
      if (rows.length === 0) return;
      const values = rows.map((row) => Object.values(row)[0]!);
      const [deleteSql, deleteParams] = forget(values);
      result[field] += (await db.query<{ affectedRows: number }>(deleteSql, [...(deleteParams ?? [])])).affectedRows;
      result.chunks++;
      onProgress?.(result, undefined);
      if (rows.length < CHUNK) return;
      after = values.at(-1)!;
    }
  };
}
