import { randomBytes, randomUUID } from 'node:crypto';
import { parseDatabaseUrl, resolveDatabaseUrl, type ConnectionSettings } from '../config/database-url.js';
import { quoteIdentifier, validateIdentifier } from '../config/identifiers.js';
import { Database, type ConnectionEvent, type DatabaseCounters, type Statement, type Transaction } from '../db/database.js';
import { describeQueryError } from '../db/server-errors.js';
import type { ServerVersion } from '../db/server-version.js';
import { ExitCode, JobqError } from '../errors.js';
import { randomLetters, randomPrefixPattern } from './demo-jobs.js';
import { applyMigrations, assertSchemaCurrent, readSchemaVersion } from './migrate.js';
import * as claimSql from './sql/claim.js';
import * as completeSql from './sql/complete.js';
import { INSERT_JOBS_SQL } from './sql/enqueue.js';
import { COUNT_ROWS_SQL, CREATE_DATABASE_SQL, DROP_TABLE_SQL } from './sql/schema.js';
import * as statsSql from './sql/stats.js';
import {
  JOB_STATUSES,
  MAX_BATCH_SIZE,
  type Claim,
  type ClaimOptions,
  type ClaimedJob,
  type JobStatus,
  type NewJob,
  type QueueStats,
  type Settlement,
} from './types.js';

export interface JobQueueOptions {
  /** `mysql://user:password@host:port/database`; default: `JOBQ_DATABASE_URL`, `.env`, then `mysql://root@127.0.0.1:3306/jobq`. */
  url?: string;
  /** The jobs table (letters, digits, `_`); default `jobs`. */
  table?: string;
  /**
   * Ride out server restarts and network cuts by reconnecting and sending the statement again
   * (default false: fail at once). The first connection still fails at once unless `waitForServer`.
   */
  reconnect?: boolean;
  /** With `reconnect`: also wait, however long, for a server that is down when opening. */
  waitForServer?: boolean;
  /** Told when the connection is lost and when it is back (with `reconnect`). */
  onConnectionEvent?: (event: ConnectionEvent) => void;
  /** Create the database named in the URL if it does not exist (what `setup-tables` does). */
  createDatabase?: boolean;
}

export interface SetupOptions {
  /** Drop and create the table (the article's setup). Refused on a non-empty table unless `force`. */
  recreate?: boolean;
  force?: boolean;
}

export interface SetupResult {
  /** Schema version before: null when the table did not exist. */
  from: number | null;
  to: number;
  /** Rows dropped by `recreate`. */
  dropped: number;
}

export const DEFAULT_TABLE = 'jobs';
const DEFAULT_LEASE_SECONDS = 60;
const DEFAULT_MAX_ATTEMPTS = 5;
const DEFAULT_STEAL_AFTER_MS = 50;

/**
 * A job queue in one MySQL/MariaDB table. One instance holds one connection; open one per
 * process (or per concurrent consumer), as the CLI's workers do.
 */
export class JobQueue {
  private readonly quotedTable: string;

  private constructor(
    private readonly db: Database,
    /** The validated table name. */
    readonly table: string,
  ) {
    this.quotedTable = quoteIdentifier(table);
  }

  /** Connects to the server, checking that it has SKIP LOCKED. Accepts a URL or options. */
  static async open(urlOrOptions: string | JobQueueOptions = {}): Promise<JobQueue> {
    const options = typeof urlOrOptions === 'string' ? { url: urlOrOptions } : urlOrOptions;
    const settings = parseDatabaseUrl(resolveDatabaseUrl(options.url));
    const table = validateIdentifier(options.table ?? DEFAULT_TABLE, 'table');
    if (options.createDatabase) await createDatabase(settings);
    const db = await Database.open({
      settings,
      reconnect: options.reconnect ?? false,
      waitForServer: (options.reconnect ?? false) && (options.waitForServer ?? false),
      ...(options.onConnectionEvent !== undefined && { onConnectionEvent: options.onConnectionEvent }),
    });
    return new JobQueue(db, table);
  }

  /** The server's version, as read on connect. */
  get serverVersion(): ServerVersion {
    return this.db.serverVersion;
  }

  /** Database name, host and port in use (no password). */
  get location(): Pick<ConnectionSettings, 'host' | 'port' | 'database' | 'user'> {
    const { host, port, database, user } = this.db.settings;
    return { host, port, database, user };
  }

  /** Deadlock and lock-wait retries and reconnects so far on this connection. */
  get counters(): Readonly<DatabaseCounters> {
    return this.db.counters;
  }

  /**
   * Creates the table if it does not exist, or migrates it to the current schema keeping its rows.
   * Harmless to run again. With `recreate`, drops it first: refused with the row count if it has
   * rows, unless `force`.
   */
  async setup(options: SetupOptions = {}): Promise<SetupResult> {
    const database = this.db.settings.database;
    let from = await readSchemaVersion(this.db, database, this.table);
    let dropped = 0;
    if (options.recreate && from !== null) {
      dropped = await this.countRows();
      if (dropped > 0 && !options.force) {
        throw new JobqError(
          `table ${JSON.stringify(this.table)} holds ${dropped} rows that --recreate would delete; add --force to drop them anyway`,
          ExitCode.refused,
        );
      }
      await this.db.query(DROP_TABLE_SQL(this.quotedTable));
      from = null;
    }
    const to = await applyMigrations(this.db, this.quotedTable, from ?? 0);
    return { from, to, dropped };
  }

  /** Throws a one-line error unless the table exists with the schema this jobq uses. */
  async assertReady(): Promise<void> {
    await assertSchemaCurrent(this.db, this.db.settings.database, this.table);
  }

  /**
   * Inserts jobs in one statement (one round trip, one commit). Each job's key makes the insert
   * idempotent: sending the same jobs again after a lost connection adds nothing twice.
   */
  async enqueueMany(jobs: readonly NewJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const rows = jobs.map((job) => [job.key ?? randomUUID(), job.d ?? randomLetters(), job.e ?? randomLetters()]);
    await this.run(INSERT_JOBS_SQL(this.quotedTable), [rows]);
  }

  /**
   * Claims up to `batchSize` jobs: finds candidates without locking, then locks the free ones by
   * primary key with SKIP LOCKED and marks them claimed under a new token, in one short transaction.
   */
  async claim(options: ClaimOptions): Promise<Claim> {
    return (await this.claimCycle(undefined, options)).claim;
  }

  /** Deletes the claim's jobs (or marks them `done` with `keepDone`), only those it still owns. */
  async complete(claim: Claim, options: { keepDone?: boolean } = {}): Promise<Settlement> {
    return this.settle(claim, this.completeSql(options.keepDone));
  }

  /**
   * {@link complete} the previous claim and {@link claim} the next batch in one transaction and one
   * commit: what a consumer loop does, in three round trips instead of six.
   */
  async completeAndClaim(previous: Claim, options: ClaimOptions & { keepDone?: boolean }): Promise<{ settlement: Settlement; claim: Claim }> {
    return this.claimCycle({ claim: previous, sql: this.completeSql(options.keepDone) }, options);
  }

  /** Hands the claim's jobs back to the queue, unclaimed and due at once. */
  async release(claim: Claim): Promise<Settlement> {
    return this.settle(claim, completeSql.RELEASE_OWNED_SQL(this.quotedTable));
  }

  /** Pushes the claim's lease end to `leaseSeconds` from now; returns how many jobs are still held. */
  async extendLease(claim: Claim, leaseSeconds: number): Promise<number> {
    if (claim.jobs.length === 0) return 0;
    const result = await this.run<{ affectedRows: number }>(completeSql.EXTEND_LEASE_SQL(this.quotedTable), [
      Math.round(leaseSeconds * 1e6),
      claim.jobs.map((job) => job.id),
      claim.token,
    ]);
    return result.affectedRows;
  }

  /** Puts `failed` jobs (all, or those with the given ids) back to `unclaimed` with fresh attempts. */
  async requeueFailed(ids?: readonly number[]): Promise<number> {
    const byIds = ids !== undefined;
    if (byIds && ids.length === 0) return 0;
    const result = await this.run<{ affectedRows: number }>(
      completeSql.REQUEUE_FAILED_SQL(this.quotedTable, byIds),
      byIds ? [ids] : [],
    );
    return result.affectedRows;
  }

  /** Counts per status (zeros included), the head-of-queue age and claimed jobs per owner. */
  async stats(): Promise<QueueStats> {
    const byStatus = await this.run<Array<{ status: JobStatus; count: number }>>(statsSql.COUNT_BY_STATUS_SQL(this.quotedTable));
    const counts = Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
    for (const row of byStatus) counts[row.status] = Number(row.count);
    const head = await this.run<Array<{ age_us: number }>>(statsSql.HEAD_AGE_SQL(this.quotedTable));
    const owners = await this.run<Array<{ owner_id: number | null; count: number; expired: number }>>(
      statsSql.CLAIMED_BY_OWNER_SQL(this.quotedTable),
    );
    return {
      table: this.table,
      counts,
      total: Object.values(counts).reduce((sum, n) => sum + n, 0),
      headAgeSeconds: head[0] === undefined ? null : Math.max(0, Number(head[0].age_us)) / 1e6,
      claimedByOwner: owners.map((row) => ({ ownerId: row.owner_id, count: Number(row.count), expired: Number(row.expired) })),
    };
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.db.close();
  }

  private completeSql(keepDone: boolean | undefined): string {
    return (keepDone ? completeSql.MARK_DONE_SQL : completeSql.DELETE_OWNED_SQL)(this.quotedTable);
  }

  private candidatesStatement(options: ClaimOptions, limit: number): Statement {
    const { count, index } = options.lane ?? { count: 1, index: 0 };
    return options.pick === 'random-prefix'
      ? [claimSql.CANDIDATES_PREFIX_SQL(this.quotedTable), [limit, randomPrefixPattern(), count, index, limit, count, index, limit, limit]]
      : [claimSql.CANDIDATES_OLDEST_SQL(this.quotedTable), [limit, count, index, limit, limit]];
  }

  /** Other lanes' jobs that have waited too long; none when there is only one lane. */
  private async findStale(options: ClaimOptions, limit: number): Promise<Array<{ id: number }>> {
    if (options.lane === undefined || options.lane.count <= 1) return [];
    const stealAfterMicroseconds = Math.round((options.lane.stealAfterMs ?? DEFAULT_STEAL_AFTER_MS) * 1000);
    return this.db.query<Array<{ id: number }>>(claimSql.CANDIDATES_STALE_SQL(this.quotedTable), [stealAfterMicroseconds, limit]);
  }

  /**
   * One turn of the consumer loop, optionally settling the previous claim first:
   *   1. [START TRANSACTION;] [settle previous;] candidates   (autocommit when nothing to settle)
   *   2. START TRANSACTION; lock candidates FOR UPDATE SKIP LOCKED
   *   3. mark failed; mark claimed; COMMIT
   * The candidate read takes no locks at READ COMMITTED, inside the transaction or not.
   */
  private async claimCycle(
    previous: { claim: Claim; sql: string } | undefined,
    options: ClaimOptions,
  ): Promise<{ settlement: Settlement; claim: Claim }> {
    const batchSize = checkBatchSize(options.batchSize);
    const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    const leaseMicroseconds = Math.round((options.leaseSeconds ?? DEFAULT_LEASE_SECONDS) * 1e6);
    const candidates = this.candidatesStatement(options, batchSize);
    checkLane(options.lane);
    const owned = previous?.claim.jobs.map((job) => job.id) ?? [];
    return this.inTransaction(async (tx) => {
      const token = randomBytes(16);
      let settled = 0;
      let found: Array<{ id: number }>;
      if (previous !== undefined && owned.length > 0) {
        const [result, rows] = await tx.run([previous.sql, [owned, previous.claim.token]], candidates);
        settled = (result as { affectedRows: number }).affectedRows;
        found = rows as Array<{ id: number }>;
      } else {
        found = await this.db.query<Array<{ id: number }>>(candidates[0], [...(candidates[1] ?? [])]);
      }
      if (found.length === 0) found = await this.findStale(options, batchSize);
      const settlement = { settled, lost: owned.length - settled };
      const empty = (candidateCount: number): { settlement: Settlement; claim: Claim } => ({
        settlement,
        claim: { token, jobs: [], candidates: candidateCount, failedIds: [] },
      });
      if (found.length === 0) return empty(0);
      const [lockedRows] = await tx.run([claimSql.LOCK_CANDIDATES_SQL(this.quotedTable), [found.map((row) => row.id)]]);
      const locked = lockedRows as ClaimedJob[];
      if (locked.length === 0) return empty(found.length);
      const exhausted = locked.filter((job) => job.attempts >= maxAttempts).map((job) => job.id);
      const jobs = locked
        .filter((job) => job.attempts < maxAttempts)
        .map((job) => ({ ...job, attempts: job.attempts + 1 }))
        .sort((a, b) => a.id - b.id);
      const writes: Statement[] = [];
      if (exhausted.length > 0) writes.push([claimSql.MARK_FAILED_SQL(this.quotedTable), [exhausted]]);
      if (jobs.length > 0) {
        writes.push([claimSql.MARK_CLAIMED_SQL(this.quotedTable), [options.ownerId ?? null, token, leaseMicroseconds, jobs.map((job) => job.id)]]);
      }
      await tx.commitWith(...writes);
      return { settlement, claim: { token, jobs, candidates: found.length, failedIds: exhausted } };
    });
  }

  private async settle(claim: Claim, sql: string): Promise<Settlement> {
    if (claim.jobs.length === 0) return { settled: 0, lost: 0 };
    const result = await this.run<{ affectedRows: number }>(sql, [claim.jobs.map((job) => job.id), claim.token]);
    return { settled: result.affectedRows, lost: claim.jobs.length - result.affectedRows };
  }

  private async countRows(): Promise<number> {
    const rows = await this.run<Array<{ count: number }>>(COUNT_ROWS_SQL(this.quotedTable));
    return Number(rows[0]?.count ?? 0);
  }

  /** One statement, with a missing or misshapen table turned into an actionable error. */
  private async run<T>(sql: string, values?: unknown[]): Promise<T> {
    try {
      return await this.db.query<T>(sql, values);
    } catch (error) {
      throw describeQueryError(error, this.table, this.db.settings.database);
    }
  }

  private async inTransaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(work);
    } catch (error) {
      throw describeQueryError(error, this.table, this.db.settings.database);
    }
  }
}

function checkBatchSize(batchSize: number): number {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
    throw new JobqError(`batch size must be a whole number from 1 to ${MAX_BATCH_SIZE}, not ${batchSize}`, ExitCode.usage);
  }
  return batchSize;
}

function checkLane(lane: ClaimOptions['lane']): void {
  if (lane === undefined) return;
  if (!Number.isInteger(lane.count) || lane.count < 1 || !Number.isInteger(lane.index) || lane.index < 0 || lane.index >= lane.count) {
    throw new JobqError(`lane must have a whole count >= 1 and an index from 0 to count - 1, not ${JSON.stringify(lane)}`, ExitCode.usage);
  }
}

async function createDatabase(settings: ConnectionSettings): Promise<void> {
  const admin = await Database.open({ settings, withoutDatabase: true });
  try {
    await admin.query(CREATE_DATABASE_SQL(quoteIdentifier(settings.database)));
  } finally {
    await admin.close();
  }
}
