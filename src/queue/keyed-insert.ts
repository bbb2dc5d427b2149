import type { Statement } from '../db/transaction.js';
import type { JobRow } from './new-jobs.js';
import { insertJobsSql, insertValues } from './sql/enqueue.js';
import { countNewJobs, UNMARKED } from './new-job-count.js';
import * as keySql from './sql/job-keys.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/** The ids a chunk of jobs ended up with (null when it named none). */
export interface IdRange {
  firstId: number | null;
  lastId: number | null;
}

export const idRange = (row: { first_id: number | null; last_id: number | null } | undefined): IdRange => ({
  firstId: row?.first_id == null ? null : Number(row.first_id),
  lastId: row?.last_id == null ? null : Number(row.last_id),
});

/**
 * The statements that insert a chunk of jobs into a partitioned table, whose keys' uniqueness
 * jobq_job_keys holds (sql/job-keys.ts says how, and why two ways). A key given twice in the
 * chunk queues its first job, as the unique index of an unpartitioned table would.
 */
export class KeyedInsert {
  /** The chunk's jobs, the first of each key. */
  readonly jobs: JobRow[];
  private readonly keys: string[];

  /** `table`, `keysTable` and `newJobsTable` (the jobs table, jobq_job_keys and jobq_new_jobs) as the connection must name them. */
  constructor(
    private readonly table: QuotedIdentifier,
    private readonly keysTable: string,
    private readonly newJobsTable: string,
    private readonly queue: string,
    rows: readonly JobRow[],
  ) {
    const byKey = new Map<string, JobRow>();
    // Every row has a job key: unique jobs, which have none, are refused on a partitioned table.
    for (const row of rows) if (!byKey.has(row[0]!)) byKey.set(row[0]!, row);
    this.jobs = [...byKey.values()];
    this.keys = [...byKey.keys()];
  }

  /**
   * Inserts these jobs, records their keys and counts them as new jobs; a key that has a row fails
   * it with 1062 (so the keys of the jobs it makes were free, and so many jobs it makes).
   */
  insert(jobs: readonly JobRow[]): Statement[] {
    if (jobs.length === 0) return [];
    const record: Statement =
      jobs.length === 1 ? [keySql.RECORD_KEY_SQL(this.keysTable), [this.queue, jobs[0]![0]]] : [keySql.RECORD_KEYS_SQL(this.table, this.keysTable), [this.queue, jobs.map((row) => row[0])]];
    const count = countNewJobs({ queue: this.queue, jobs: this.table, newJobs: this.newJobsTable }, jobs, true, UNMARKED);
    return [[insertJobsSql(this.table, jobs.length), insertValues(jobs, UNMARKED)], record, count];
  }

  /** The careful way's first step: forget the keys of gone jobs, lock and read the taken ones. */
  lockTaken(): Statement[] {
    return [
      [keySql.FORGET_KEYS_OF_GONE_JOBS_SQL(this.table, this.keysTable), [this.queue, this.keys]],
      [keySql.TAKEN_KEYS_SQL(this.keysTable), [this.queue, this.keys]],
    ];
  }

  /** The jobs whose key is free, given the results of {@link lockTaken}. */
  free(results: readonly unknown[]): JobRow[] {
    const taken = new Set((results.at(-1) as Array<{ job_key: string }>).map((row) => row.job_key));
    return this.jobs.filter((row) => !taken.has(row[0]!));
  }

  /** Reads the ids the keys ended up with: new jobs' or the ones that held them. */
  range(): Statement {
    return [keySql.ID_RANGE_OF_KEYS_SQL(this.keysTable), [this.queue, this.keys]];
  }

  /** The ids read by {@link range}, the last of these results. */
  static rangeOf(results: readonly unknown[]): IdRange {
    return idRange((results.at(-1) as Array<{ first_id: number | null; last_id: number | null }>)[0]);
  }
}
