import { parseDatabaseUrl, resolveDatabaseUrl, type ConnectionSettings } from './config/database-url.js';
import { quoteIdentifier, validateIdentifier, type QuotedIdentifier } from './config/identifiers.js';
import { type ConnectionEvent } from './db/connection-events.js';
import { Database, type DatabaseCounters, type DatabaseOptions } from './db/database.js';
import { ReplicaCandidates, type ReplicaOptions } from './db/replica.js';
import { describeQueryError } from './db/server-errors.js';
import type { ServerVersion } from './db/server-version.js';
import type { WorkerOptions } from './worker/options.js';
import { Worker } from './worker/worker.js';
import { cancelJobs, type CancelResult } from './queue/cancel.js';
import { readJob, waitForJob, type JobInfo, type WaitOptions } from './queue/job-info.js';
import { findJobs, runNow, type FoundJob, type JobSearch } from './queue/job-search.js';
import { readOldestWaitingByKind, readQueueStats, readQueueTotals, readServerInfo } from './queue/stats.js';
import { DEFAULT_TABLE } from './config/defaults.js';
import { checkNumber, OPTIONS } from './config/options.js';
import { assertSchemaCurrent } from './queue/migrate.js';
import { checkKind, toJobRow, type JobRow } from './queue/new-jobs.js';
import { readTableLayout, type TableLayout } from './queue/table-layout.js';
import { insertTarget, JobInserts, type EnqueueOptions } from './queue/enqueue.js';
import { localWaitConnections, queueIdentity, waitsOnConnection, wakeLocalWorkers, wakeOnEnqueue } from './wake-ups/in-process.js';
import { Ringer } from './wake-ups/ringer.js';
import { DueTimers } from './claim/due-timers.js';
import { waitStatement, type WaitStatement } from './wake-ups/sql.js';
import { setupTable, type SetupOptions, type SetupResult } from './queue/setup.js';
import { recountKeptCounts } from './queue/recount.js';
import { pruneJobs, type PruneOptions, type PruneResult } from './queue/prune.js';
import { foldNewJobs } from './queue/new-job-count.js';
import { foldUncountedJobs } from './queue/uncounted-jobs.js';
import { enqueueDueTicks, listSchedules, removeSchedule, saveSchedule, type Schedule, type ScheduledJob, type ScheduleOptions } from './queue/schedules.js';
import { DirectClaims, type FailOptions, type SettleOptions } from './claim/direct-claims.js';
import { hasPendingWork } from './claim/sql/claim.js';
import { JOBS_BY_KEY_SQL } from './queue/sql/enqueue.js';
import { heldUniqueKey, JOBS_BY_UNIQUE_KEY_SQL } from './queue/sql/unique-jobs.js';
import { COUNT_LANES_SQL } from './claim/sql/lanes.js';
import { readFailedJobs, requeueFailedJobs } from './queue/failed-jobs.js';
import * as pauseSql from './claim/sql/pause.js';
import { readLimits, removeLimit, setLimit } from './queue/limits.js';
import { CREATE_DATABASE_SQL } from './queue/sql/schema.js';
import {
  type AnyTasks,
  type Claim,
  type ClaimOptions,
  type EnqueueResult,
  type FailedJob,
  type HandlerMap,
  type JobHandler,
  type KindLimit,
  type KindLimitStatus,
  type JobOf,
  type NewJob,
  type QueueStats,
  type QueueTotals,
  type ScheduledJobOf,
  type ServerInfo,
  type Settlement,
  type TaskMap,
} from './queue/types.js';

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




/**
 * A job queue in one MySQL/MariaDB table. An instance holds one connection for enqueueing,
 * claiming and stats; each worker made by {@link work} opens connections of its own.
 * `JobQueue.open<Tasks>()` with a map of kinds to payload types makes `enqueue` and the handlers
 * of `work` type-checked.
 */
export class JobQueue<Tasks extends TaskMap = AnyTasks> {
  private readonly quotedTable: QuotedIdentifier;
  /** The table by name and quoted, as the queue's modules take it. */
  private readonly target: { name: string; quoted: QuotedIdentifier };
  /** The queue as this process's workers and enqueues tell it apart (wake-ups/in-process.ts). */
  private readonly identity: string;
  /** The statement its idle workers wait in, and what ends it after an enqueue (src/wake-ups/). */
  private readonly waitStatement: WaitStatement;
  private readonly ringer: Ringer;
  /** Delayed jobs this queue enqueued wake the workers when they come due (in the next minute). */
  private readonly comingDue = new DueTimers(() => this.wakeWorkers());
  private readonly inserts: JobInserts;
  private readonly claims: DirectClaims;

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
    this.target = { name: table, quoted: this.quotedTable };
    this.identity = queueIdentity(databaseOptions.settings, table);
    this.waitStatement = waitStatement(db.settings.database, insertTarget(db.settings.database, table));
    this.ringer = new Ringer(() => db.openAnother(), this.waitStatement.sleeping, () => localWaitConnections(this.identity), (message) => process.emitWarning(message, { code: 'JOBQ_WAKE_UPS' }));
    // The table named with its database, for statements on a caller's connection.
    this.inserts = new JobInserts(db, insertTarget(db.settings.database, table), (work) => this.described(work), async () => (await this.layout()).partitions > 0);
    this.claims = new DirectClaims(db, { name: table, quoted: this.quotedTable, partitions: async () => (await this.layout()).partitions });
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
    const replica = options.replicaUrl === undefined ? undefined : { settings: parseDatabaseUrl(options.replicaUrl, 'replica URL'), maxLagSeconds: checkNumber(OPTIONS.replicaMaxLagSeconds, options.replicaMaxLagSeconds) };
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
    const result = await setupTable(this.db, this.target, options);
    this.layoutRead = undefined;
    return { ...result, layout: await this.layout() };
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


  /** Throws a one-line error unless the table exists with the schema this jobq uses. */
  async assertReady(): Promise<void> {
    await assertSchemaCurrent(this.db, this.db.settings.database, this.table);
  }

  /**
   * Queues one job and returns its id, in one round trip. With `connection`, inside the caller's
   * own transaction (see {@link EnqueueOptions}), in two. A job whose key exists already is not
   * queued twice: the existing job's id comes back.
   */
  async enqueue(job: NewJob<Tasks>, options: EnqueueOptions = {}): Promise<number> {
    const row = toJobRow(job, 'job');
    const due = this.dueTimes(options, [row]);
    const id = await this.inserts.one(row, options, job.key !== undefined || job.unique !== undefined);
    this.wakeWhenDue(due);
    return id;
  }

  /**
   * Queues jobs with multi-row INSERTs, one round trip per chunk of up to 1,000 jobs (each chunk
   * all or nothing; with `connection`, all of them in the caller's transaction). Every job is
   * checked before anything is sent. Each job's key makes the insert idempotent: sending the same
   * jobs again after a lost connection adds nothing twice. `idRange: false` skips the read of the
   * ids (on the caller's connection, one more round trip per chunk).
   */
  async enqueueMany(jobs: ReadonlyArray<NewJob<Tasks>>, options: EnqueueOptions & { idRange?: boolean } = {}): Promise<EnqueueResult> {
    const rows = jobs.map((job, i) => toJobRow(job, `job ${i + 1}`));
    const due = this.dueTimes(options, rows);
    const result = await this.inserts.many(rows, options, jobs.some((job) => job.key !== undefined || job.unique !== undefined));
    this.wakeWhenDue(due);
    return result;
  }

  /**
   * Wakes the idle workers of the queue: this process's at once, other processes' on this server
   * by a KILL QUERY of their wait statement (src/wake-ups/), sent on a connection of the queue's
   * own without holding up the caller. Enqueues through the queue do it themselves once their jobs
   * are committed; call it after committing a transaction of your own that enqueued jobs
   * (`connection` or `transaction`), whose commit jobq cannot see. Workers it cannot wake see the
   * jobs at their next poll (`pollIntervalMs`).
   */
  wakeWorkers(): void {
    wakeLocalWorkers(this.identity);
    this.ringer.ring();
  }

  /**
   * When the rows of an enqueue come due, in ms after its commit: 0 for those due at once; none
   * for an enqueue in the caller's transaction, whose commit jobq does not see. When some are due
   * at once, the ringer gets ready while the insert runs.
   */
  private dueTimes(options: EnqueueOptions, rows: readonly JobRow[]): number[] {
    if (options.connection !== undefined || options.transaction !== undefined) return [];
    const times = [...new Set(rows.map((row) => row[6] / 1000))];
    if (times.includes(0)) this.ringer.prepare();
    return times;
  }

  /** After the commit: the workers are woken for the jobs due now, and again as the others come due. */
  private wakeWhenDue(times: readonly number[]): void {
    for (const ms of times) {
      if (ms === 0) this.wakeWorkers();
      else this.comingDue.in(ms);
    }
  }

  /** The ids of the jobs that hold these unique keys now (see {@link UniqueOptions}); a key no job holds is not in the map. */
  async jobIdsByUniqueKey(keys: readonly string[]): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const rows = await this.run<Array<{ unique_key: string; id: number }>>(JOBS_BY_UNIQUE_KEY_SQL(this.quotedTable), [keys.map(heldUniqueKey)]);
    return new Map(rows.map((row) => [row.unique_key, Number(row.id)]));
  }

  /** The ids of the jobs that hold these keys now; a key no job holds is not in the map. */
  async jobIdsByKey(keys: readonly string[]): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const rows = await this.run<Array<{ job_key: string; id: number }>>(JOBS_BY_KEY_SQL(this.quotedTable), [keys]);
    return new Map(rows.map((row) => [row.job_key, Number(row.id)]));
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
        hasDueWork: (db, kinds, exceptKinds) => pendingWork(db, this.quotedTable, { kinds, includeDelayed: false, exceptKinds }),
        enqueueDueTicks: async (db) => enqueueDueTicks(db, this.quotedTable, this.table, (await this.layout()).partitions > 0),
        foldNewJobs: async (db) => {
          await foldNewJobs(db, this.table);
          await foldUncountedJobs(db, this.target);
        },
        openCandidateSource: (onEvent) => (this.replica === undefined ? undefined : new ReplicaCandidates({ ...this.replica, onEvent })),
        wakeOnEnqueue: (wake) => wakeOnEnqueue(this.identity, wake),
        wakeWorkers: () => this.wakeWorkers(),
        waitStatement: this.waitStatement,
        waitsOn: (connectionId) => waitsOnConnection(this.identity, connectionId),
      },
      handlers,
      options,
    );
  }

  /**
   * Claims up to `batchSize` jobs: finds candidates without locking, then locks the free ones by
   * primary key with SKIP LOCKED and marks them claimed under a new token, in one short transaction.
   */
  claim(options: ClaimOptions): Promise<Claim> {
    return this.described(() => this.claims.claim(options));
  }

  /** Deletes the claim's jobs (or marks them `done` with `keepDone`), only those it still owns. */
  complete(claim: Claim, options: SettleOptions & { keepDone?: boolean } = {}): Promise<Settlement> {
    return this.described(() => this.claims.complete(claim, options));
  }

  /**
   * {@link complete} the previous claim and {@link claim} the next batch in one transaction and one
   * commit: what a consumer loop does, in three round trips instead of six.
   */
  completeAndClaim(previous: Claim, options: ClaimOptions & { keepDone?: boolean }): Promise<{ settlement: Settlement; claim: Claim }> {
    return this.described(() => this.claims.completeAndClaim(previous, options));
  }

  /** Hands the claim's jobs back to the queue, unclaimed and due at once. */
  release(claim: Claim, options: SettleOptions = {}): Promise<Settlement> {
    return this.described(() => this.claims.release(claim, options));
  }

  /**
   * Records that processing failed: each job goes back to the queue after a delay that doubles
   * with every attempt, or to `failed` once it has been claimed `maxAttempts` times. The error's
   * message (first 1,000 characters) is kept in `last_error` either way.
   */
  fail(claim: Claim, error: unknown, options: FailOptions = {}): Promise<Settlement & { failed: number }> {
    return this.described(() => this.claims.fail(claim, error, options));
  }

  /** Pushes the claim's lease end to `leaseSeconds` from now; returns how many jobs are still held. */
  extendLease(claim: Claim, leaseSeconds: number): Promise<number> {
    return this.described(() => this.claims.extendLease(claim, leaseSeconds));
  }

  /** Puts `failed` jobs (all, or those with the given ids) back to `unclaimed` with fresh attempts. */
  requeueFailed(ids?: readonly number[]): Promise<number> {
    return this.described(() => requeueFailedJobs(this.db, this.target, ids));
  }

  /** Per kind (jobs with a kind), the seconds the longest-waiting due job has waited since it came due. */
  oldestWaitingByKind(): Promise<Map<string, number>> {
    return this.described(() => readOldestWaitingByKind(this.db, this.quotedTable));
  }

  /** A page of failed jobs, the latest failure first, with their error and the start of their payload. */
  failedJobs(page: { offset?: number; limit?: number } = {}): Promise<FailedJob[]> {
    return this.described(() => readFailedJobs(this.db, this.quotedTable, page));
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

  /**
   * Limits the jobs of a kind for every worker of this queue, on every machine, from their next
   * claim turns on (within about 100 ms): at most `concurrency` running at once, and at most
   * `groupConcurrency` of each of its groups, a job running from its claim until it is settled or
   * its lease runs out. Stored in the database, so it outlasts restarts; setting it again replaces
   * the kind's limits. See "Limits and groups" in docs/library.md.
   */
  async setLimit(kind: string, limit: KindLimit): Promise<void> {
    await this.described(() => setLimit(this.db, this.table, kind, limit));
  }

  /** Lifts a kind's limit; whether it had one. */
  async removeLimit(kind: string): Promise<boolean> {
    return this.described(() => removeLimit(this.db, this.table, kind));
  }

  /** The limits set, by kind in alphabetical order, with the jobs of each kind running now. */
  async limits(): Promise<KindLimitStatus[]> {
    return this.described(() => readLimits(this.db, this.quotedTable, this.table));
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
   * Cancels jobs by id: waiting, delayed and failed ones end `cancelled` at once. A job a worker
   * runs is marked: that worker fires its handler's signal within a second or two and the job ends
   * `cancelled`, or `done` if it completes first. Done jobs and ids with no job are reported.
   */
  cancel(ids: readonly number[]): Promise<CancelResult> {
    return this.described(() => cancelJobs(this.db, this.target, ids));
  }

  /** The job with this id, whole (payload, status, attempts, errors, result, progress, lease); undefined when there is none. */
  job(id: number): Promise<JobInfo | undefined> {
    return this.described(() => readJob(this.db, this.quotedTable, id));
  }

  /**
   * Waits until the job ends: resolves with its result (`keepResults`; undefined when none was
   * kept) once it is done, rejects with JobFailed when it failed for good and JobCancelled when it
   * was cancelled. Reads the job every `pollMs` (200 by default) on the queue's connection.
   */
  waitFor(id: number, options: WaitOptions = {}): Promise<unknown> {
    return this.described(() => waitForJob(this.db, this.quotedTable, id, options));
  }

  /** A page of jobs by id, key, or kind, group and status, read from an index whatever the table holds (what the dashboard's search shows). */
  findJobs(search: JobSearch = {}): Promise<FoundJob[]> {
    return this.described(() => findJobs(this.db, this.quotedTable, search));
  }

  /** Makes delayed jobs due now; returns how many were delayed (others are left as they are). */
  runNow(ids: readonly number[]): Promise<number> {
    return this.described(() => runNow(this.db, this.quotedTable, ids));
  }

  /**
   * Deletes done and failed jobs that ended longer ago than the given ages (`'7d'`, `'12h'`, or
   * seconds), in chunks of 1,000 rows, oldest first; returns how many went.
   */
  async prune(options: PruneOptions): Promise<PruneResult> {
    const { partitions } = await this.layout();
    return this.described(() => pruneJobs(this.db, this.target, { ...options, partitioned: partitions > 0 }));
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
    const [pausedKinds, schedules, limits] = [await this.pausedKinds(), await this.schedules(), await this.limits()];
    return this.described(() => readQueueStats(this.db, this.target, { pausedKinds, schedules, limits }));
  }

  /**
   * Sets the counts of waiting, done and failed jobs, which jobq keeps rather than counts, from the
   * table (setup() does this when it creates or migrates the table). Only needed after rows were
   * changed by hand; enqueues and workers go on meanwhile, waiting at most for the count (a read of
   * the waiting, done and failed jobs' index entries).
   */
  recount(): Promise<void> {
    return this.described(() => recountKeptCounts(this.db, this.target));
  }

  /**
   * The running totals of every kind together and the highest id handed out: two small reads,
   * whatever the table holds (for throughput between two readings, where `stats()` counts rows).
   */
  totals(): Promise<QueueTotals> {
    return this.described(() => readQueueTotals(this.db, this.target));
  }

  /** The server's version, default isolation level and binary log format. */
  serverInfo(): Promise<ServerInfo> {
    return readServerInfo(this.db);
  }

  /** Closes the connection. Workers made by {@link work} have their own: stop them first. */
  async close(): Promise<void> {
    this.comingDue.clear();
    await this.ringer.close();
    await this.db.close();
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


/** See {@link JobQueue.hasPendingWork}; on any of the queue's connections. */
async function pendingWork(db: Database, table: QuotedIdentifier, options: { includeDelayed?: boolean; kinds?: readonly string[] | undefined; exceptKinds?: readonly string[] }): Promise<boolean> {
  const [sql, values] = hasPendingWork(table, { ...(options.kinds !== undefined && { kinds: options.kinds }) }, options.includeDelayed ?? false, options.exceptKinds);
  const [row] = await db.query<Array<{ pending: number }>>(sql, values);
  return Number(row?.pending) === 1;
}


async function createDatabase(settings: ConnectionSettings): Promise<void> {
  const admin = await Database.open({ settings, withoutDatabase: true });
  try {
    await admin.query(CREATE_DATABASE_SQL(quoteIdentifier(settings.database)));
  } finally {
    await admin.close();
  }
}
