import type { Connection as CallerConnection, PoolConnection as CallerPoolConnection } from 'mysql2/promise';
import { parseDatabaseUrl, resolveDatabaseUrl, type ConnectionSettings } from '../config/database-url.js';
import { quoteIdentifier, validateIdentifier } from '../config/identifiers.js';
import { Database, type Statement, type ConnectionEvent, type DatabaseCounters, type DatabaseOptions } from '../db/database.js';
import { readGaleraNode } from '../db/galera.js';
import { ReplicaCandidates, type CandidateSource, type ReplicaOptions } from '../db/replica.js';
import { describeQueryError, isDuplicateKey } from '../db/server-errors.js';
import type { ServerVersion } from '../db/server-version.js';
import { ExitCode, JobqError } from '../errors.js';
import type { WorkerOptions } from '../worker/options.js';
import { Worker } from '../worker/worker.js';
import { ClaimLoop, type ClaimLoopSettings, type JobSink } from '../worker/claim-loop.js';
import type { TurnGate } from '../worker/turn-gate.js';
import { cancelJobs, type CancelResult } from './cancel.js';
import { claimTurn, type TurnResult } from './claim-turn.js';
import { TotalsTally } from './running-totals.js';
import { checkLeaseSeconds, DEFAULTS, MAX_LANES } from './defaults.js';
import { randomLetters } from './demo-jobs.js';
import { applyMigrations, assertSchemaCurrent, readSchemaVersion } from './migrate.js';
import { checkKind, timeOrderedKey, toJobRow, type JobRow } from './new-jobs.js';
import { checkPartitions, readTableLayout, type TableLayout } from './table-layout.js';
import { idRange, KeyedInsert, type IdRange } from './keyed-insert.js';
import { pruneJobs, type PruneOptions, type PruneResult } from './prune.js';
import { enqueueDueTicks, listSchedules, removeSchedule, saveSchedule, type Schedule, type ScheduledJob, type ScheduleOptions } from './schedules.js';
import { completeSettle, failSettle, releaseSettle, renewSettle, type Settle } from './settlements.js';
import { hasPendingWork } from './sql/claim.js';
import * as completeSql from './sql/complete.js';
import { ID_RANGE_OF_KEYS_SQL, INSERT_ONE_JOB_SQL, insertJobsSql, JOBS_BY_KEY_SQL } from './sql/enqueue.js';
import { COUNT_LANES_SQL, DELETE_LANES_FROM_SQL, insertLanesSql } from './sql/lanes.js';
import * as countersSql from './sql/counters.js';
import * as failedSql from './sql/failed-jobs.js';
import * as pauseSql from './sql/pause.js';
import * as keySql from './sql/job-keys.js';
import * as partitionSql from './sql/partitions.js';
import type { PartitionMethod } from './sql/partitions.js';
import { COUNT_ROWS_SQL, CREATE_DATABASE_SQL, DROP_TABLE_SQL } from './sql/schema.js';
import * as statsSql from './sql/stats.js';
import {
  JOB_STATUSES,
  type AnyTasks,
  type Claim,
  type ClaimOptions,
  type EnqueueResult,
  type FailedJob,
  type HandlerMap,
  type JobHandler,
  type JobOf,
  type JobStatus,
  type NewJob,
  type QueueStats,
  type ScheduledJobOf,
  type ServerInfo,
  type Settlement,
  type TaskMap,
} from './types.js';

export interface JobQueueOptions {
  /** `mysql://user:password@host:port/database`; default: `JOBQ_DATABASE_URL`, `.env`, then `mysql://root@127.0.0.1:3306/jobq`. */
  url?: string;
  /** The jobs table (letters, digits, `_`); default `jobs`. */
  table?: string;
  /**
   * Ride out server restarts and network cuts by reconnecting and sending the statement again
   * (default false: fail at once). The first connection still fails at once unless `waitForServer`.
   * Workers made by {@link JobQueue.work} always reconnect.
   */
  reconnect?: boolean;
  /** With `reconnect`: also wait, however long, for a server that is down when opening. */
  waitForServer?: boolean;
  /** Told when the connection is lost and when it is back (with `reconnect`). */
  onConnectionEvent?: (event: ConnectionEvent) => void;
  /** Create the database named in the URL if it does not exist (what `setup-tables` does). */
  createDatabase?: boolean;
  /**
   * A replica of the server to read claim candidates from (`mysql://...`, same database). Locking,
   * claiming and settling stay on the primary. Bypassed, with a connection event, while it is
   * down, not replicating, or further behind than `replicaMaxLagSeconds` (default 1).
   */
  replicaUrl?: string;
  replicaMaxLagSeconds?: number;
}

export interface SetupOptions {
  /** Drop and create the table (the article's setup). Refused on a non-empty table unless `force`. */
  recreate?: boolean;
  force?: boolean;
  /** Claim turns that may run at once, for all workers together (default 3; see DEFAULTS.lanes). */
  lanes?: number;
  /**
   * Partition the table on `id` into this many partitions (2 to 256), or 0 to undo it; left as it
   * is when omitted. Rows are kept; the table is copied. See the README's "Scaling out".
   */
  partitions?: number;
  /** How to partition: `hash` (default) or `key`. */
  partitionBy?: PartitionMethod;
}

export interface SetupResult {
  /** Schema version before: null when the table did not exist. */
  from: number | null;
  to: number;
  /** Rows dropped by `recreate`. */
  dropped: number;
  /** The table's partitioning now. */
  layout: TableLayout;
}

/**
 * Where an enqueue runs. By default on the queue's own connection, committed at once. With
 * `connection`, on the caller's mysql2 (promise API) connection, inside whatever transaction is
 * open there: jobq neither commits nor rolls back, so the job exists only if the caller commits.
 */
export interface EnqueueOptions {
  connection?: CallerConnection | CallerPoolConnection;
}

export const DEFAULT_TABLE = 'jobs';
// One INSERT per chunk: at most this many rows, and about this many bytes, well under the
// servers' default max_allowed_packet (16 MiB in MariaDB, 64 MiB in MySQL).
const CHUNK_ROWS = 1000;
const CHUNK_BYTES = 4 * 1024 * 1024;
/** The server's status flag for "a transaction is open" (SERVER_STATUS_IN_TRANS in the protocol), in every OK packet. */
const SERVER_STATUS_IN_TRANS = 1;
/** Tries of an insert into a partitioned table before a key that keeps being taken is an error. */
const KEYED_INSERT_ATTEMPTS = 10;
/** Tries of an insert read back on a Galera node (insertReadBack) before missing rows are an error. */
const MAX_INSERT_ATTEMPTS = 5;

/** Which of a claim's jobs a settlement is about; all of them when omitted. */
export interface SettleOptions {
  ids?: readonly number[];
}

export interface FailOptions extends SettleOptions {
  /** Jobs claimed this often go to `failed` instead of back to the queue (default 5). */
  maxAttempts?: number;
  /** The first retry waits this long; each further attempt doubles it (default 1000, at most an hour). */
  retryDelayMs?: number;
}

/**
 * A job queue in one MySQL/MariaDB table. An instance holds one connection for enqueueing,
 * claiming and stats; each worker made by {@link work} opens connections of its own.
 * `JobQueue.open<Tasks>()` with a map of kinds to payload types makes `enqueue` and the handlers
 * of `work` type-checked.
 */
export class JobQueue<Tasks extends TaskMap = AnyTasks> {
  private readonly quotedTable: string;
  /** The table named with its database, for statements on a caller's connection. */
  private readonly qualifiedTable: string;

  /** Candidate sources made for claim loops on this queue's connection, closed with it. */
  private readonly candidateSources: CandidateSource[] = [];
  /** The table's partitioning, read once: how to enqueue and where lanes read. */
  private layoutRead: Promise<TableLayout> | undefined;

  private constructor(
    private readonly db: Database,
    private readonly databaseOptions: DatabaseOptions,
    /** The validated table name. */
    readonly table: string,
    private readonly replica: Omit<ReplicaOptions, 'onEvent'> | undefined,
  ) {
    this.quotedTable = quoteIdentifier(table);
    this.qualifiedTable = `${quoteIdentifier(db.settings.database)}.${this.quotedTable}`;
  }

  /** Connects to the server, checking that it has SKIP LOCKED. Accepts a URL or options. */
  static async open<Tasks extends TaskMap = AnyTasks>(urlOrOptions: string | JobQueueOptions = {}): Promise<JobQueue<Tasks>> {
    const options = typeof urlOrOptions === 'string' ? { url: urlOrOptions } : urlOrOptions;
    const settings = parseDatabaseUrl(resolveDatabaseUrl(options.url));
    const table = validateIdentifier(options.table ?? DEFAULT_TABLE, 'table');
    if (options.createDatabase) await createDatabase(settings);
    const databaseOptions: DatabaseOptions = {
      settings,
      reconnect: options.reconnect ?? false,
      waitForServer: (options.reconnect ?? false) && (options.waitForServer ?? false),
      ...(options.onConnectionEvent !== undefined && { onConnectionEvent: options.onConnectionEvent }),
    };
    const replica = options.replicaUrl === undefined ? undefined : { settings: parseDatabaseUrl(options.replicaUrl, 'replica URL'), maxLagSeconds: checkMaxLag(options.replicaMaxLagSeconds) };
    return new JobQueue<Tasks>(await Database.open(databaseOptions), databaseOptions, table, replica);
  }

  /** The server's version, as read on connect. */
  get serverVersion(): ServerVersion {
    return this.db.serverVersion;
  }

  /** Database name, and the host and port of the server in use (no password). */
  get location(): { host: string; port: number; database: string; user: string } {
    const { database, user } = this.db.settings;
    return { ...this.db.server, database, user };
  }

  /** Deadlock and lock-wait retries and reconnects so far on this connection. */
  get counters(): Readonly<DatabaseCounters> {
    return this.db.counters;
  }

  /**
   * Creates the table if it does not exist, or migrates it to the current schema keeping its rows.
   * Harmless to run again. With `recreate`, drops it first: refused with the row count if it has
   * rows, unless `force`. With `lanes`, sets how many claim turns may run at once.
   */
  async setup(options: SetupOptions = {}): Promise<SetupResult> {
    if (options.lanes !== undefined && !(Number.isInteger(options.lanes) && options.lanes >= 1 && options.lanes <= MAX_LANES)) {
      throw new JobqError(`lanes must be a whole number from 1 to ${MAX_LANES}, not ${JSON.stringify(options.lanes)}`, ExitCode.usage);
    }
    const partitioning = options.partitions === undefined ? undefined : checkPartitions(options.partitions, options.partitionBy);
    const database = this.db.settings.database;
    let from = await readSchemaVersion(this.db, database, this.table);
    let dropped = 0;
    const recreated = options.recreate === true && from !== null;
    if (recreated) {
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
    const to = await applyMigrations(this.db, this.table, this.quotedTable, from ?? 0);
    // The keys of the jobs that went with a dropped table (jobq_job_keys exists from schema 10 on).
    if (recreated) await this.db.query(keySql.FORGET_KEYS_SQL, [this.table]);
    if (options.lanes !== undefined) {
      await this.db.query(DELETE_LANES_FROM_SQL, [this.table, options.lanes]);
      await this.db.query(insertLanesSql(options.lanes), Array(options.lanes).fill(this.table));
    }
    this.layoutRead = undefined;
    if (partitioning !== undefined) await this.partition(partitioning);
    return { from, to, dropped, layout: await this.layout() };
  }

  /**
   * The table's partitioning (read once; `setup` reads it again). Enqueue and the claim loops
   * follow it: a table partitioned while writers run is written by them as before until they
   * reopen it, so change it with writers stopped, like any schema change.
   */
  layout(): Promise<TableLayout> {
    this.layoutRead ??= this.described(() => readTableLayout(this.db, this.db.settings.database, this.table)).catch((error: unknown) => {
      this.layoutRead = undefined; // read again next time, once the server is back
      throw error;
    });
    return this.layoutRead;
  }

  /** Partitions the table as asked, or undoes it; the job keys move with it (sql/job-keys.ts). */
  private async partition(wanted: { partitions: number; method: PartitionMethod }): Promise<void> {
    const now = await this.layout();
    if (wanted.partitions === now.partitions && (wanted.partitions === 0 || wanted.method === now.method)) return;
    if (wanted.partitions === 0) {
      await this.db.query(partitionSql.unpartitionTableSql(this.quotedTable));
      await this.db.query(keySql.FORGET_KEYS_SQL, [this.table]);
    } else {
      // The keys first: if the ALTER fails, the table keeps its unique index and ignores them.
      if (now.partitions === 0) await this.db.query(keySql.RECORD_EXISTING_KEYS_SQL(this.quotedTable), [this.table, this.table]);
      await this.db.query(partitionSql.partitionTableSql(this.quotedTable, wanted.method, wanted.partitions, now.partitions === 0));
    }
    this.layoutRead = undefined;
  }

  /** Throws a one-line error unless the table exists with the schema this jobq uses. */
  async assertReady(): Promise<void> {
    await assertSchemaCurrent(this.db, this.db.settings.database, this.table);
  }

  /**
   * Queues one job and returns its id, in one round trip. With `connection`, inside the caller's
   * own transaction (see {@link EnqueueOptions}). A job whose key exists already is not queued
   * twice: the existing job's id comes back.
   */
  async enqueue(job: NewJob<Tasks>, options: EnqueueOptions = {}): Promise<number> {
    const row = toJobRow(job, 'job');
    if ((await this.layout()).partitions > 0) return (await this.insertKeyed([row], options))!.firstId!;
    if (this.readsBackInserts(options)) return (await this.insertReadBack([row])).firstId!;
    const result = await this.runOn<{ insertId: number }>(options, INSERT_ONE_JOB_SQL(this.tableFor(options)), row);
    return Number(result.insertId);
  }

  /**
   * Queues jobs with multi-row INSERTs, one round trip per chunk of up to 1,000 jobs (each chunk
   * all or nothing; with `connection`, all of them in the caller's transaction). Every job is
   * checked before anything is sent. Each job's key makes the insert idempotent: sending the same
   * jobs again after a lost connection adds nothing twice. `idRange: false` skips the read of the
   * ids (one more round trip per chunk).
   */
  async enqueueMany(jobs: ReadonlyArray<NewJob<Tasks>>, options: EnqueueOptions & { idRange?: boolean } = {}): Promise<EnqueueResult> {
    return this.insertRows(
      jobs.map((job, i) => toJobRow(job, `job ${i + 1}`)),
      options,
    );
  }

  /** The ids of the jobs that hold these keys now; a key no job holds is not in the map. */
  async jobIdsByKey(keys: readonly string[]): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const rows = await this.run<Array<{ job_key: string; id: number }>>(JOBS_BY_KEY_SQL(this.quotedTable), [keys]);
    return new Map(rows.map((row) => [row.job_key, Number(row.id)]));
  }

  /** `start-processing`'s generators: the article's random demo rows. @internal */
  async enqueueDemoJobs(count: number): Promise<void> {
    const rows = Array.from({ length: count }, (): JobRow => [timeOrderedKey(), null, null, randomLetters(), randomLetters(), 0, 0]);
    await this.insertRows(rows, { idRange: false });
  }

  /**
   * Starts an in-process worker that runs `handlers` on claimed jobs: one function for every
   * kind, or an object of handlers by kind (then only those kinds are claimed). See
   * {@link WorkerOptions} for the options and their defaults; `await worker.stop()` to stop.
   */
  work(handlers: JobHandler<JobOf<Tasks>> | HandlerMap<Tasks>, options: WorkerOptions = {}): Worker<Tasks> {
    const { database } = this.db.settings;
    return new Worker<Tasks>(
      {
        table: this.table,
        quotedTable: this.quotedTable,
        connect: (onConnectionEvent, stopWaiting) => Database.open({ ...this.databaseOptions, reconnect: true, waitForServer: true, stopWaiting, onConnectionEvent }),
        prepare: async (db) => {
          await assertSchemaCurrent(db, database, this.table);
          const [row] = await db.query<Array<{ lanes: number }>>(COUNT_LANES_SQL, [this.table]);
          const { partitions } = await readTableLayout(db, database, this.table);
          return { lanes: Number(row?.lanes ?? 0), partitions };
        },
        hasDueWork: (db, kinds) => pendingWork(db, this.quotedTable, { kinds, includeDelayed: false }),
        enqueueDueTicks: async (db) => enqueueDueTicks(db, this.quotedTable, this.table, (await this.layout()).partitions > 0),
        openCandidateSource: (onEvent) => (this.replica === undefined ? undefined : new ReplicaCandidates({ ...this.replica, onEvent })),
      },
      handlers,
      options,
    );
  }

  /**
   * A claim loop on this queue's connection, for `start-processing`'s consumers, which bring
   * their own gate and batch handling. @internal
   */
  claimLoop(settings: ClaimLoopSettings, gate: TurnGate, sink: JobSink, onTurn: (result: TurnResult) => void): ClaimLoop {
    const { onConnectionEvent } = this.databaseOptions;
    const candidateSource = this.replica === undefined ? undefined : new ReplicaCandidates({ ...this.replica, ...(onConnectionEvent !== undefined && { onEvent: onConnectionEvent }) });
    if (candidateSource !== undefined) this.candidateSources.push(candidateSource);
    return new ClaimLoop(this.db, this.quotedTable, { ...settings, ...(candidateSource !== undefined && { candidateSource }) }, gate, sink, onTurn);
  }

  /**
   * Claims up to `batchSize` jobs: finds candidates without locking, then locks the free ones by
   * primary key with SKIP LOCKED and marks them claimed under a new token, in one short transaction.
   */
  async claim(options: ClaimOptions): Promise<Claim> {
    return (await this.turn([], options)).claim;
  }

  /** Deletes the claim's jobs (or marks them `done` with `keepDone`), only those it still owns. */
  async complete(claim: Claim, options: SettleOptions & { keepDone?: boolean } = {}): Promise<Settlement> {
    return this.settle(completeSettle(this.quotedTable, claim, this.idsOf(claim, options.ids), options.keepDone ?? DEFAULTS.keepDone));
  }

  /**
   * {@link complete} the previous claim and {@link claim} the next batch in one transaction and one
   * commit: what a consumer loop does, in three round trips instead of six.
   */
  async completeAndClaim(previous: Claim, options: ClaimOptions & { keepDone?: boolean }): Promise<{ settlement: Settlement; claim: Claim }> {
    const settle = previous.jobs.length === 0 ? [] : [completeSettle(this.quotedTable, previous, this.idsOf(previous), options.keepDone ?? DEFAULTS.keepDone)];
    return this.turn(settle, options);
  }

  /** Hands the claim's jobs back to the queue, unclaimed and due at once. */
  async release(claim: Claim, options: SettleOptions = {}): Promise<Settlement> {
    return this.settle(releaseSettle(this.quotedTable, claim, this.idsOf(claim, options.ids)));
  }

  /**
   * Records that processing failed: each job goes back to the queue after a delay that doubles
   * with every attempt, or to `failed` once it has been claimed `maxAttempts` times. The error's
   * message (first 1,000 characters) is kept in `last_error` either way.
   */
  async fail(claim: Claim, error: unknown, options: FailOptions = {}): Promise<Settlement & { failed: number }> {
    const policy = { maxAttempts: options.maxAttempts ?? DEFAULTS.maxAttempts, retryDelayMs: options.retryDelayMs ?? DEFAULTS.retryDelayMs };
    const ids = this.idsOf(claim, options.ids);
    const settlement = await this.settle(failSettle(this.quotedTable, claim, ids, error, policy));
    const failed = claim.jobs.filter((job) => ids.includes(job.id) && job.attempts >= policy.maxAttempts).length;
    return { ...settlement, failed };
  }

  /** Pushes the claim's lease end to `leaseSeconds` from now; returns how many jobs are still held. */
  async extendLease(claim: Claim, leaseSeconds: number): Promise<number> {
    checkLeaseSeconds(leaseSeconds);
    if (claim.jobs.length === 0) return 0;
    const [sql, values] = renewSettle(this.quotedTable, claim, this.idsOf(claim), leaseSeconds).statement;
    return (await this.run<{ affectedRows: number }>(sql, [...(values ?? [])])).affectedRows;
  }

  /** Puts `failed` jobs (all, or those with the given ids) back to `unclaimed` with fresh attempts. */
  async requeueFailed(ids?: readonly number[]): Promise<number> {
    const byIds = ids !== undefined;
    if (byIds && ids.length === 0) return 0;
    const result = await this.run<{ affectedRows: number }>(completeSql.REQUEUE_FAILED_SQL(this.quotedTable, byIds), byIds ? [ids] : []);
    return result.affectedRows;
  }

  /** Per kind (jobs with a kind), the seconds the longest-waiting due job has waited since it came due. */
  async oldestWaitingByKind(): Promise<Map<string, number>> {
    const rows = await this.run<Array<{ kind: string; age_us: number }>>(statsSql.OLDEST_WAITING_BY_KIND_SQL(this.quotedTable));
    return new Map(rows.map((row) => [row.kind, Math.max(0, Number(row.age_us)) / 1e6]));
  }

  /** A page of failed jobs, the latest failure first, with their error and the start of their payload. */
  async failedJobs(page: { offset?: number; limit?: number } = {}): Promise<FailedJob[]> {
    const limit = Math.min(Math.max(1, Math.trunc(page.limit ?? 50)), 500);
    const offset = Math.max(0, Math.trunc(page.offset ?? 0));
    const rows = await this.run<Array<{ id: number; kind: string | null; attempts: number; last_error: string | null; payload_preview: string | null; failed_at: string }>>(
      failedSql.FAILED_PAGE_SQL(this.quotedTable),
      [limit, offset],
    );
    return rows.map((row) => ({
      id: Number(row.id),
      kind: row.kind,
      attempts: row.attempts,
      lastError: row.last_error,
      payloadPreview: row.payload_preview,
      failedAt: new Date(Number(row.failed_at) * 1000),
    }));
  }

  /**
   * Pauses a kind for every worker of this queue, on every machine, until {@link resume}: claim
   * turns that start from now on leave its jobs waiting; jobs already claimed finish. Stored in
   * the database, so it outlasts restarts. Pausing a paused kind changes nothing.
   */
  async pause(kind: string): Promise<void> {
    await this.run(pauseSql.PAUSE_KIND_SQL, [this.table, checkKind(kind)]);
  }

  /** Lets workers claim the kind again. Resuming a kind that is not paused changes nothing. */
  async resume(kind: string): Promise<void> {
    await this.run(pauseSql.RESUME_KIND_SQL, [this.table, checkKind(kind)]);
  }

  /** The kinds paused now, in alphabetical order. */
  async pausedKinds(): Promise<string[]> {
    const rows = await this.run<Array<{ kind: string }>>(pauseSql.PAUSED_KINDS_SQL, [this.table]);
    return rows.map((row) => row.kind);
  }

  /**
   * Creates (or replaces) a recurring job: at every tick of the cron expression (5 fields, or 6
   * with seconds first; read in `timeZone`, default UTC) one `job` is enqueued, by whichever
   * worker of the queue comes first: no leader, and one job per tick however many workers run.
   * After downtime only the latest missed tick is enqueued unless `catchUp: 'all'`.
   */
  schedule(name: string, cron: string, job: ScheduledJobOf<Tasks>, options: ScheduleOptions = {}): Promise<Schedule> {
    return this.described(() => saveSchedule(this.db, this.table, name, cron, job as ScheduledJob, options));
  }

  /** Removes a schedule; false when there was none of that name. Jobs it enqueued stay. */
  unschedule(name: string): Promise<boolean> {
    return this.described(() => removeSchedule(this.db, this.table, name));
  }

  /** The queue's schedules, by name, with their next tick. */
  schedules(): Promise<Schedule[]> {
    return this.described(() => listSchedules(this.db, this.table));
  }

  /**
   * Cancels jobs by id: waiting, delayed and failed ones are deleted. A job a worker holds is left
   * alone and reported with its owner; so are done jobs, and ids with no job.
   */
  cancel(ids: readonly number[]): Promise<CancelResult> {
    return this.described(() => cancelJobs(this.db, this.quotedTable, ids));
  }

  /**
   * Deletes done and failed jobs that ended longer ago than the given ages (`'7d'`, `'12h'`, or
   * seconds), in chunks of 1,000 rows, oldest first; returns how many went.
   */
  async prune(options: PruneOptions): Promise<PruneResult> {
    const { partitions } = await this.layout();
    return this.described(() => pruneJobs(this.db, this.quotedTable, { ...options, ...(partitions > 0 && { keysOf: this.table }) }));
  }

  /**
   * Whether anything is left to do: a claimed job, or an unclaimed one that is due now (or at any
   * time, with `includeDelayed`); of some kinds only, with `kinds`. Index dives only.
   */
  hasPendingWork(options: { includeDelayed?: boolean; kinds?: readonly string[] } = {}): Promise<boolean> {
    return this.described(() => pendingWork(this.db, this.quotedTable, options));
  }

  /** Counts per status and per kind (zeros included), paused kinds, the longest wait and claimed jobs per owner. */
  async stats(): Promise<QueueStats> {
    const zero = () => Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
    const rows = await this.run<Array<{ scope: 'all' | 'kind'; kind: string | null; status: JobStatus; count: number; due: number | null }>>(
      statsSql.COUNT_BY_STATUS_AND_KIND_SQL(this.quotedTable),
    );
    const pausedKinds = await this.pausedKinds();
    const totalRows = await this.run<Array<{ kind: string; completed: string; failed: string; retried: string; claims: string; empty_claims: string }>>(
      countersSql.TOTALS_BY_KIND_SQL,
      [this.table],
    );
    const totals = new Map(
      totalRows
        .filter((row) => Number(row.completed) + Number(row.failed) + Number(row.retried) > 0)
        .map((row) => [row.kind, { completed: Number(row.completed), failed: Number(row.failed), retried: Number(row.retried) }]),
    );
    const claims = totalRows.reduce((sum, row) => ({ total: sum.total + Number(row.claims), empty: sum.empty + Number(row.empty_claims) }), { total: 0, empty: 0 });
    const schedules = await this.schedules();
    const nextTicks = new Map<string, Date>();
    for (const { job, nextTick, problem } of schedules) {
      const earliest = nextTicks.get(job.kind);
      if (nextTick !== null && problem === null && (earliest === undefined || nextTick < earliest)) nextTicks.set(job.kind, nextTick);
    }
    const counts = zero();
    const withoutKind = { counts: zero(), delayed: 0 };
    const known = [...pausedKinds, ...nextTicks.keys(), ...[...totals.keys()].filter((kind) => kind !== '')];
    const byKind = new Map<string, { counts: Record<JobStatus, number>; delayed: number }>(known.map((kind) => [kind, { counts: zero(), delayed: 0 }]));
    for (const row of rows) {
      const count = Number(row.count);
      const delayed = row.status === 'unclaimed' ? count - Number(row.due ?? 0) : 0;
      if (row.scope === 'all') {
        counts[row.status] += count;
        withoutKind.counts[row.status] += count;
        withoutKind.delayed += delayed;
      } else {
        if (!byKind.has(row.kind!)) byKind.set(row.kind!, { counts: zero(), delayed: 0 });
        const entry = byKind.get(row.kind!)!;
        entry.counts[row.status] += count;
        entry.delayed += delayed;
        withoutKind.counts[row.status] -= count;
        withoutKind.delayed -= delayed;
      }
    }
    const paused = new Set(pausedKinds);
    const kinds: QueueStats['byKind'] = [...byKind]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([kind, entry]) => ({ kind, ...entry, paused: paused.has(kind), nextScheduledAt: nextTicks.get(kind) ?? null, totals: totals.get(kind) ?? noTotals() }));
    if (Object.values(withoutKind.counts).some((n) => n > 0) || totals.has('')) {
      kinds.unshift({ kind: null, ...withoutKind, paused: false, nextScheduledAt: null, totals: totals.get('') ?? noTotals() });
    }
    const [head] = await this.run<Array<{ age_us: number | null; max_id: number | null }>>(statsSql.HEAD_AGE_AND_MAX_ID_SQL(this.quotedTable));
    const owners = await this.run<Array<{ owner_id: number; count: number; expired: number; lease_left_us: number }>>(statsSql.CLAIMED_BY_OWNER_SQL(this.quotedTable));
    return {
      table: this.table,
      counts,
      total: Object.values(counts).reduce((sum, n) => sum + n, 0),
      byKind: kinds,
      headAgeSeconds: head?.age_us === null || head?.age_us === undefined ? null : Math.max(0, Number(head.age_us)) / 1e6,
      claimedByOwner: owners.map((row) => ({
        ownerId: row.owner_id === 0 ? null : row.owner_id,
        count: Number(row.count),
        expired: Number(row.expired),
        leaseLeftSeconds: Number(row.lease_left_us) / 1e6,
      })),
      maxId: Number(head?.max_id ?? 0),
      pausedKinds,
      skippedSchedules: schedules.filter((s) => s.problem !== null).map((s) => ({ name: s.name, reason: s.problem! })),
      claims,
      layout: await readTableLayout(this.db, this.db.settings.database, this.table),
    };
  }

  /** The server's version, default isolation level and binary log format. */
  async serverInfo(): Promise<ServerInfo> {
    let rows: Array<{ version: string; isolation: string; binlog_format: string; log_bin: number }>;
    try {
      rows = await this.db.query(statsSql.SERVER_INFO_SQL('transaction_isolation'));
    } catch (error) {
      if ((error as { errno?: number }).errno !== 1193) throw error; // unknown variable: MariaDB before 11.1
      rows = await this.db.query(statsSql.SERVER_INFO_SQL('tx_isolation'));
    }
    const info = rows[0]!;
    const galera = await readGaleraNode((sql) => this.db.query(sql));
    return {
      version: info.version,
      isolationLevel: info.isolation,
      binlogFormat: info.binlog_format,
      binlogEnabled: Number(info.log_bin) === 1,
      ...(galera !== undefined && { galera }),
    };
  }

  /** Closes the connection. Workers made by {@link work} have their own: stop them first. */
  async close(): Promise<void> {
    await Promise.all(this.candidateSources.map((source) => source.close()));
    await this.db.close();
  }

  private async insertRows(rows: JobRow[], options: EnqueueOptions & { idRange?: boolean }): Promise<EnqueueResult> {
    const partitioned = (await this.layout()).partitions > 0;
    let firstId: number | null = null;
    let lastId: number | null = null;
    for (const chunk of chunks(rows)) {
      const range = partitioned ? await this.insertKeyed(chunk, options) : await this.insertUnique(chunk, options);
      if (range === undefined || range.firstId === null || range.lastId === null) continue;
      firstId = firstId === null ? range.firstId : Math.min(firstId, range.firstId);
      lastId = lastId === null ? range.lastId : Math.max(lastId, range.lastId);
    }
    return { count: rows.length, firstId, lastId };
  }

  /** Inserts jobs into an unpartitioned table, whose unique job_key index drops keys sent twice; then reads their ids unless `idRange` is false. */
  private async insertUnique(rows: JobRow[], options: EnqueueOptions & { idRange?: boolean }): Promise<IdRange | undefined> {
    if (this.readsBackInserts(options)) return this.insertReadBack(rows);
    const table = this.tableFor(options);
    await this.runOn(options, insertJobsSql(table, rows.length), rows.flat());
    if (options.idRange === false) return undefined;
    const [range] = await this.runOn<Array<{ first_id: number | null; last_id: number | null }>>(options, ID_RANGE_OF_KEYS_SQL(table), [rows.map((row) => row[0])]);
    return idRange(range);
  }

  /** On a Galera node, jobq's own inserts are read back (see insertReadBack); a caller's transaction is the caller's to commit. */
  private readsBackInserts(options: EnqueueOptions): boolean {
    return options.connection === undefined && this.db.galera !== undefined;
  }

  /**
   * On a Galera node: the INSERT and a read of its keys in one round trip, sent again until every
   * key is there. A surviving node of a cluster that lost one was seen to answer OK to a COMMIT
   * whose changes never appeared (claim-turn.ts, commitTurn); the keys make sending the rows
   * again safe, and each such retry counts as a retried transaction. The read runs microseconds
   * after the INSERT, in the same packet: no worker can have claimed and deleted the jobs yet.
   */
  private async insertReadBack(rows: JobRow[]): Promise<IdRange> {
    const keys = rows.map((row) => row[0]);
    const distinct = new Set(keys).size;
    const sql = `${insertJobsSql(this.quotedTable, rows.length)};\n${ID_RANGE_OF_KEYS_SQL(this.quotedTable)}`;
    for (let attempt = 1; ; attempt++) {
      const [, [range]] = await this.run<[unknown, Array<{ first_id: number | null; last_id: number | null; found: number }>]>(sql, [...rows.flat(), keys]);
      if (Number(range?.found) === distinct) return idRange(range);
      if (attempt === MAX_INSERT_ATTEMPTS) throw new Error(`${distinct - Number(range?.found)} of ${distinct} jobs were not in the table after ${attempt} inserts that each answered OK`);
      this.db.counters.deadlockRetries++;
    }
  }

  /**
   * Inserts jobs into a partitioned table, their keys' uniqueness held by jobq_job_keys
   * (sql/job-keys.ts). On the queue's connection: one transaction in one round trip, unless a key
   * is taken; then the careful way, in two. On the caller's: the same steps one statement at a
   * time inside the caller's transaction (which must be open: a savepoint undoes the first try,
   * and each careful step relies on the locks of the one before). A key given twice in the rows
   * queues its first job, as the unique index of an unpartitioned table would.
   */
  private async insertKeyed(rows: JobRow[], options: EnqueueOptions & { idRange?: boolean }): Promise<IdRange | undefined> {
    const keysTable = options.connection === undefined ? keySql.KEYS_TABLE : `${quoteIdentifier(this.db.settings.database)}.${keySql.KEYS_TABLE}`;
    const chunk = new KeyedInsert(this.tableFor(options), keysTable, this.table, rows);
    const { connection } = options;
    if (connection !== undefined) {
      return this.described(async () => {
        const send = async (statements: Statement[]) => {
          const each: unknown[] = [];
          for (const [sql, values] of statements) each.push((await connection.query(sql, values as unknown[]))[0]);
          return each;
        };
        // The steps rely on a transaction: without one open (the connection is in autocommit),
        // the savepoint would vanish at once and the key's lock with it. Then they run in a
        // transaction of their own, committed at once, as a single INSERT would be.
        const [savepoint] = (await send([[keySql.SAVEPOINT_SQL]])) as [{ serverStatus: number }];
        const ownTransaction = (savepoint.serverStatus & SERVER_STATUS_IN_TRANS) === 0;
        if (ownTransaction) await send([['START TRANSACTION'], [keySql.SAVEPOINT_SQL]]);
        try {
          const range = await this.insertKeyedSteps(chunk, send);
          if (ownTransaction) await send([['COMMIT']]);
          return range;
        } catch (error) {
          if (ownTransaction) await send([['ROLLBACK']]).catch(() => undefined);
          throw error;
        }
      });
    }
    // A key taken between the careful way's two round trips (by a writer of a new key) fails it
    // as the first try failed; each such retry follows a key another writer committed.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.described(() =>
          this.db.transaction(async (tx) => {
            if (attempt > 1) return KeyedInsert.rangeOf(await tx.commitWith(...chunk.insert(chunk.free(await tx.run(...chunk.lockTaken()))), chunk.range()));
            const insert = chunk.insert(chunk.jobs);
            if (chunk.jobs.length === 1) {
              const [inserted] = (await tx.commitWith(...insert)) as [{ insertId: number }];
              return { firstId: Number(inserted.insertId), lastId: Number(inserted.insertId) };
            }
            if (options.idRange === false) {
              await tx.commitWith(...insert);
              return undefined;
            }
            return KeyedInsert.rangeOf(await tx.commitWith(...insert, chunk.range()));
          }),
        );
      } catch (error) {
        if (!isDuplicateKey(error) || attempt === KEYED_INSERT_ATTEMPTS) throw error;
      }
    }
  }

  /** insertKeyed's steps on a caller's connection, after its savepoint: the first try, undone to the savepoint when a key is taken, then the careful way. */
  private async insertKeyedSteps(chunk: KeyedInsert, send: (statements: Statement[]) => Promise<unknown[]>): Promise<IdRange> {
    try {
      return KeyedInsert.rangeOf(await send([...chunk.insert(chunk.jobs), chunk.range()]));
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      await send([[keySql.ROLLBACK_TO_SAVEPOINT_SQL]]);
    }
    const free = chunk.free(await send(chunk.lockTaken()));
    return KeyedInsert.rangeOf(await send([...chunk.insert(free), chunk.range()]));
  }

  private idsOf(claim: Claim, only?: readonly number[]): readonly number[] {
    if (only === undefined) return claim.jobs.map((job) => job.id);
    const held = new Set(claim.jobs.map((job) => job.id));
    const stranger = only.find((id) => !held.has(id));
    if (stranger !== undefined) throw new JobqError(`job ${stranger} is not part of this claim`, ExitCode.usage);
    return only;
  }

  private async turn(settle: Settle[], claim: ClaimOptions): Promise<{ settlement: Settlement; claim: Claim }> {
    const { partitions } = await this.layout();
    // Paused kinds are read in the turn itself: a claim here never takes a paused kind's jobs.
    return this.described(() => claimTurn(this.db, this.quotedTable, { settle, claim, pause: { queue: this.table, paused: [], refresh: true }, totals: this.addedToTotals(), partitions }));
  }

  private async settle(settle: Settle): Promise<Settlement> {
    if (settle.ids.length === 0) return { settled: 0, lost: 0 };
    return (await this.described(() => claimTurn(this.db, this.quotedTable, { settle: [settle], totals: this.addedToTotals() }))).settlement;
  }

  /** Each call of the lower-level API adds its own counts to the running totals, with its COMMIT. */
  private addedToTotals() {
    return { queue: this.table, pending: new TotalsTally(), flush: true };
  }

  private async countRows(): Promise<number> {
    const rows = await this.run<Array<{ count: number }>>(COUNT_ROWS_SQL(this.quotedTable));
    return Number(rows[0]?.count ?? 0);
  }

  private tableFor(options: EnqueueOptions): string {
    return options.connection === undefined ? this.quotedTable : this.qualifiedTable;
  }

  /** One statement on the caller's connection if given, else on the queue's own. */
  private runOn<T>(options: EnqueueOptions, sql: string, values: unknown[]): Promise<T> {
    const { connection } = options;
    if (connection === undefined) return this.run<T>(sql, values);
    return this.described(async () => (await connection.query(sql, values))[0] as T);
  }

  /** One statement on the queue's own connection. */
  private run<T>(sql: string, values?: unknown[]): Promise<T> {
    return this.described(() => this.db.query<T>(sql, values));
  }

  /** Runs `work`, turning a missing or misshapen table (and the like) into an actionable error. */
  private async described<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw describeQueryError(error, this.table, this.db.settings.database);
    }
  }
}

const noTotals = () => ({ completed: 0, failed: 0, retried: 0 });

/** See {@link JobQueue.hasPendingWork}; on any of the queue's connections. */
async function pendingWork(db: Database, table: string, options: { includeDelayed?: boolean; kinds?: readonly string[] | undefined }): Promise<boolean> {
  const [sql, values] = hasPendingWork(table, { ...(options.kinds !== undefined && { kinds: options.kinds }) }, options.includeDelayed ?? false);
  const [row] = await db.query<Array<{ pending: number }>>(sql, values);
  return Number(row?.pending) === 1;
}

/** Rows in INSERT-sized chunks: at most CHUNK_ROWS rows and about CHUNK_BYTES of values. */
function* chunks(rows: JobRow[]): Generator<JobRow[]> {
  let chunk: JobRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = 200 + (row[2]?.length ?? 0) + row[3].length + row[4].length;
    if (chunk.length > 0 && (chunk.length >= CHUNK_ROWS || bytes + size > CHUNK_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

async function createDatabase(settings: ConnectionSettings): Promise<void> {
  const admin = await Database.open({ settings, withoutDatabase: true });
  try {
    await admin.query(CREATE_DATABASE_SQL(quoteIdentifier(settings.database)));
  } finally {
    await admin.close();
  }
}

/** The replica lag bound: a positive number of seconds, default 1. */
function checkMaxLag(seconds: number | undefined): number {
  if (seconds === undefined) return 1;
  if (!(Number.isFinite(seconds) && seconds > 0)) throw new JobqError(`replicaMaxLagSeconds must be a positive number of seconds, not ${JSON.stringify(seconds)}`, ExitCode.usage);
  return seconds;
}
