import { EventEmitter } from 'node:events';
import { randomInt } from 'node:crypto';
import { DatabaseClosedError } from '../db/connect.js';
import { type ConnectionEvent } from '../db/connection-events.js';
import { type Database } from '../db/database.js';
import type { CandidateSource } from '../db/replica.js';
import type { AnyTasks, Claim, HandlerMap, Job, JobHandler, JobOf, TaskMap } from '../queue/types.js';
import { HandlerAbort, jobView, resolveHandlers, runHandler, settleOutcome, type Held, type ResolvedHandlers, type RunTracing } from './job-runner.js';
import { runWithin, timeoutFor } from './job-timeout.js';
import { watchCancels } from './cancel-watch.js';
import { ProgressReports } from './job-progress.js';
import { keptJson, MAX_PROGRESS_BYTES } from './job-result.js';
import { ExitCode, JobCancelled, JobqError } from '../errors.js';
import { loadJobSpans } from '../tracing/job-spans.js';
import { ClaimLoop, type JobSink, type WakeUps } from '../claim/loop.js';
import { Doorbell } from '../wake-ups/doorbell.js';
import type { WaitStatement } from '../wake-ups/sql.js';
import { resolveWorkerOptions, type ResolvedWorkerOptions, type WorkerOptions } from './options.js';
import { LaneRowGate, OPEN_GATE } from '../claim/turn-gate.js';
import { runUpkeep } from './upkeep.js';
import type { SkippedSchedule } from '../queue/schedules.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/** What a worker needs from its queue. */
export interface WorkerContext {
  /** The jobs table's plain (validated) name, and quoted for SQL. */
  table: string;
  quotedTable: QuotedIdentifier;
  /** Opens a connection of its own that reconnects through outages; waits for a server that is down until `stopWaiting` aborts. */
  connect(onConnectionEvent: (event: ConnectionEvent) => void, stopWaiting: AbortSignal): Promise<Database>;
  /** Throws a one-line error unless the table is there at the current schema; reads its lane count. */
  prepare(db: Database): Promise<{ lanes: number; partitions: number }>;
  /** Whether a job of these kinds (undefined: any kind but `exceptKinds`) is claimed, or waiting and due. */
  hasDueWork(db: Database, kinds: readonly string[] | undefined, exceptKinds?: readonly string[]): Promise<boolean>;
  /** Enqueues the ticks of the queue's schedules that have come due; names the schedules it had to skip. */
  enqueueDueTicks(db: Database): Promise<{ skipped: SkippedSchedule[] }>;
  /** Adds the queue's new jobs into its kept counts: rows of new jobs, and waiting jobs not counted yet. */
  foldNewJobs(db: Database): Promise<void>;
  /** Where the claims read candidates besides the primary (the queue's replica), if anywhere. */
  openCandidateSource(onEvent: (event: ConnectionEvent) => void): CandidateSource | undefined;
  /** Calls `wake` when this process enqueues due jobs into the queue (wake-ups/in-process.ts); returns the unsubscribe. */
  wakeOnEnqueue(wake: () => void): () => void;
  /** Wakes the queue's idle workers, of this process and of others (`queue.wakeWorkers()`). */
  wakeWorkers(): void;
  /** The statement an idle worker of the queue waits in for enqueues in other processes (wake-ups/sql.ts). */
  waitStatement: WaitStatement;
  /** A worker of this process waits on this connection; returns what ends that (wake-ups/in-process.ts). */
  waitsOn(connectionId: number): () => void;
}

/** What the `failed` event says besides the job and the error. */
export interface FailureInfo extends RunInfo {
  /** True when the job went to `failed` (attempts used up); false when it will be retried. */
  final: boolean;
}

/** What the `snoozed` event says besides the job: how long it was put off. */
export interface SnoozeInfo extends RunInfo {
  seconds: number;
}

/** What the `completed` and `failed` events say about the handler's run. */
export interface RunInfo {
  /** How long the handler ran, in milliseconds. */
  durationMs: number;
}

/** Jobs the worker has seen go by, since it started. */
export interface WorkerCounters {
  /** Claim turns that found candidates, and those of them that got none (others took them first). */
  claims: number;
  emptyClaims: number;
  completed: number;
  /** Failures sent back for another attempt, and failures that were final. */
  retried: number;
  failed: number;
  /** Runs that put their job off (`job.snooze`). */
  snoozed: number;
  /** Jobs cancelled while the worker held them (`cancel`): their handler gave up, or never started. */
  cancelled: number;
  /**
   * Transactions run again after the server rolled them back: a deadlock, or a write set that
   * lost certification to another node's (Galera, Group Replication in multi-primary mode); and
   * lock wait timeouts (1205).
   */
  deadlocks: number;
  lockWaits: number;
  /** Warnings emitted (see {@link WorkerWarning}). */
  warnings: number;
  /** Times an enqueue in another process ended the statement the idle worker waits in (src/wake-ups/). */
  wakeUps: number;
  /** Jobs whose lease ran out while their handler ran (the `lost` event). */
  lost: number;
}

/** Counters at zero: a new worker's. */
export const noCounts = (): WorkerCounters => ({ claims: 0, emptyClaims: 0, completed: 0, retried: 0, failed: 0, snoozed: 0, cancelled: 0, deadlocks: 0, lockWaits: 0, warnings: 0, wakeUps: 0, lost: 0 });

/** What a worker's log says of a job whose lease ran out while its handler ran (the `lost` event). */
export const lostLeaseMessage = (id: number) =>
  `job ${id}: its lease ran out while its handler ran (the process was frozen or too busy to renew it); another worker may run it again`;

/**
 * What the `warning` event says: `schedule`, a schedule the worker skips (its cron cannot be
 * read); `counts`, the counts of new jobs could not be folded (stats() folds them too); `stop`,
 * the worker stopped without settling some jobs (they go back when their lease ends); `wake-ups`,
 * enqueues in other processes cannot wake the worker (it finds their jobs by polling).
 */
export interface WorkerWarning {
  code: 'schedule' | 'counts' | 'stop' | 'wake-ups';
  message: string;
}

export interface StopOptions {
  /** Abort handlers still running after this long (their `job.signal` fires); default: wait for them. */
  timeoutMs?: number;
}

/**
 * Claim loops per worker, each on a connection of its own. One loop waits for the server during
 * most of its turn; a second one claims meanwhile, so the server's two cores both work. Measured
 * in `npm run bench` (200,000 jobs, no-op handler, concurrency 10): see docs/performance.md.
 */
const CLAIM_LOOPS = 2;

/** How long a worker's extra claim loop stays out after finding every lane taken, or few jobs. */
const EXTRA_LOOP_PAUSE_MS = 500;

/** After `stop({ timeoutMs })`, their own timeout or a cancel aborted them, handlers get this long to return before they are given up on. */
const ABORT_GRACE_MS = 1000;

/**
 * How long a stopping worker waits for the database (the turn under way, then the last settles)
 * before it gives up on it: during an outage a stop must still end. Jobs it could not settle go
 * back to the queue when their lease runs out.
 */
const STOP_DATABASE_WAIT_MS = 5000;

/**
 * An in-process worker: claim loops that keep `concurrency` handlers busy, settling finished jobs
 * in the same transactions that claim the next ones. Made by `queue.work()`; starts at once.
 */
export class Worker<Tasks extends TaskMap = AnyTasks> extends EventEmitter {
  /** Settles when the worker has stopped: rejects with the error that stopped it, if one did. */
  readonly finished: Promise<void>;
  readonly counters: WorkerCounters = noCounts();
  private readonly options: ResolvedWorkerOptions;
  private readonly handlers: ResolvedHandlers;
  private readonly waiting: Held[] = [];
  private readonly running = new Set<Held>();
  /**
   * A job whose lease ran out before: it may be what crashed a worker, so it runs with no other
   * job in hand, and if it crashes this one too, it takes no other job's lease down with it.
   * While it waits for the running jobs to finish and while it runs, nothing else is claimed, and
   * jobs claimed meanwhile go back unstarted (which costs them nothing).
   */
  private suspect: Held | undefined;
  private reserved = 0;
  private loops: ClaimLoop[] = [];
  private readonly claiming = new AbortController();
  private stopTimeoutMs: number | undefined;
  private checkingDrained = false;
  private whenIdle: (() => void) | undefined;
  private tracing: RunTracing | undefined;
  private progress: ProgressReports | undefined;
  private readonly onProgress = (held: Held, value: unknown): void => this.reportProgress(held, value);
  /** What settling a run needs of the options: `keepDone` keeps results too. */
  private readonly settleLimits: { maxAttempts: number; maxSnoozes: number; keepResults: boolean };

  constructor(context: WorkerContext, handlers: JobHandler<JobOf<Tasks>> | HandlerMap<Tasks>, options: WorkerOptions = {}) {
    super();
    this.options = resolveWorkerOptions(options);
    const { maxAttempts, maxSnoozes, keepResults, keepDone } = this.options;
    this.settleLimits = { maxAttempts, maxSnoozes, keepResults: keepResults || keepDone };
    this.handlers = resolveHandlers(handlers as JobHandler<Job> | Record<string, JobHandler<Job> | undefined>);
    this.finished = this.main(context);
  }

  /**
   * Stops gracefully: no new claims; jobs claimed but not started go back to the queue at once;
   * running jobs finish and are settled. With `timeoutMs`, handlers still running after that
   * long are aborted. Resolves as `finished` does.
   */
  stop(options: StopOptions = {}): Promise<void> {
    if (!this.claiming.signal.aborted) {
      this.stopTimeoutMs = options.timeoutMs;
      this.claiming.abort();
    }
    return this.finished;
  }

  private async main(context: WorkerContext): Promise<void> {
    const connections: Database[] = [];
    const onConnectionEvent = (event: ConnectionEvent) => this.emit('connection', event);
    const candidateSource = context.openCandidateSource(onConnectionEvent);
    const connect = () => context.connect(onConnectionEvent, this.claiming.signal);
    let settledAll = true;
    let watchdog: NodeJS.Timeout | undefined;
    let doorbell: Doorbell | undefined;
    try {
      connections.push(await connect());
      const { lanes, partitions } = await context.prepare(connections[0]!);
      const spans = await loadJobSpans();
      if (spans !== undefined) this.tracing = { spans, server: connections[0]!.server };
      while (connections.length < CLAIM_LOOPS) connections.push(await connect());
      const firstLane = randomInt(Math.max(1, lanes));
      doorbell = new Doorbell(() => connections[0]!.openAnother(), context.waitStatement, {
        waitsOn: (id) => context.waitsOn(id),
        unavailable: (message) => this.warn('wake-ups', message),
      });
      const wakeUps = wakeUpsOf(doorbell, context, () => this.counters.wakeUps++);
      // A claim records its owner: this process, as `ps` shows it, and as `jobq cancel` and `stats` report it.
      const settings = {
        ...this.options,
        ownerId: process.pid,
        queue: context.table,
        partitions,
        ...(this.handlers.kinds !== undefined && { kinds: this.handlers.kinds }),
        ...(candidateSource !== undefined && { candidateSource }),
      };
      this.loops = connections.map((db, i) => {
        const gate = lanes > 0 ? new LaneRowGate(context.table, lanes, firstLane + i) : OPEN_GATE;
        // The first loop always claims; the others only while lanes are free and claims come
        // back well filled: extra loops that claimed regardless slowed several workers sharing
        // few lanes, and each turn costs the server CPU however few jobs it claims.
        // An enqueue wakes the first loop only: one turn takes what it enqueued.
        const loopSettings =
          i === 0
            ? { ...settings, pauseAfterLightClaimMs: this.options.lightClaimPauseMs, wakeUps }
            : { ...settings, pauseWhenLanesBusyMs: EXTRA_LOOP_PAUSE_MS, pauseAfterLightClaimMs: EXTRA_LOOP_PAUSE_MS };
        const loop: ClaimLoop = new ClaimLoop(db, context.quotedTable, loopSettings, gate, this.sinkFor(() => loop), (result) => {
          if (this.suspect !== undefined) this.startJobs();
          const { jobs, candidates } = result.claim ?? { jobs: [], candidates: 0 };
          if (jobs.length > 0 || candidates > 0) this.counters.claims++;
          if (jobs.length === 0 && candidates > 0) this.counters.emptyClaims++;
          this.counters.deadlocks = sum(connections, (db) => db.counters.deadlockRetries);
          this.counters.lockWaits = sum(connections, (db) => db.counters.lockWaitRetries);
          if (this.options.once) void this.stopIfDrained(() => this.hasUnpausedDueWork(context, connections[0]!));
        });
        return loop;
      });
      const tickerDb = await connect();
      connections.push(tickerDb);
      this.progress = new ProgressReports(tickerDb, context.quotedTable);
      watchCancels(tickerDb, context.quotedTable, () => this.runningIds(), (ids) => this.cancelRunning(ids), this.claiming.signal);
      // A handler whose lease ran out is told while it runs, not only when it returns.
      watchdog = setInterval(() => {
        for (const held of this.running) if (held.loop.leaseLost(held.claim)) this.loseLease(held);
      }, Math.min(1000, this.options.leaseSeconds * 250)).unref();
      let failure: unknown;
      const fail = (error: unknown) => {
        if (!(error instanceof DatabaseClosedError)) failure ??= error;
        this.claiming.abort();
      };
      settledAll = await this.boundOnceStopped(
        Promise.all([
          ...this.loops.map((loop) => loop.run(this.claiming.signal).catch(fail)),
          runUpkeep(
            { enqueueDueTicks: () => context.enqueueDueTicks(tickerDb), foldNewJobs: () => context.foldNewJobs(tickerDb) },
            (topic, message) => this.warn(topic, message),
            this.claiming.signal,
          ),
        ]),
      );
      this.releaseWaiting();
      await this.handlersDone();
      if (settledAll) settledAll = await this.boundOnceStopped(Promise.all(this.loops.map((loop) => loop.drain().catch(fail))));
      if (!settledAll) {
        const unsettled = sum(this.loops, (loop) => loop.unsettled);
        this.warn('stop', `the database did not answer within ${STOP_DATABASE_WAIT_MS / 1000} s of the stop; ${unsettled} job${unsettled === 1 ? '' : 's'} left unsettled go back to the queue when their lease runs out`);
      }
      if (failure !== undefined) throw failure;
    } catch (error) {
      if (error instanceof DatabaseClosedError && this.claiming.signal.aborted) return; // stopped while waiting for the server
      if (this.listenerCount('error') > 0) {
        this.finished.catch(() => undefined);
        this.emit('error', error);
      }
      throw error;
    } finally {
      clearInterval(watchdog);
      this.claiming.abort();
      doorbell?.close(connections[0]!);
      // Given up on, a connection is dropped: an orderly close would wait for the server too.
      if (!settledAll) for (const db of connections) db.destroy();
      await Promise.all([...connections.map((db) => db.close()), candidateSource?.close()]);
    }
  }

  /** Whether `work` ended, waiting for it at most STOP_DATABASE_WAIT_MS once the worker is stopping. */
  private async boundOnceStopped(work: Promise<unknown>): Promise<boolean> {
    const { signal } = this.claiming;
    const stopping = signal.aborted ? Promise.resolve() : new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    const giveUp = stopping.then(() => new Promise<false>((resolve) => setTimeout(resolve, STOP_DATABASE_WAIT_MS, false).unref()));
    return Promise.race([work.then(() => true), giveUp]);
  }

  /** The sink of one loop: room for `concurrency` running jobs and a batch per loop waiting. */
  private sinkFor(loop: () => ClaimLoop): JobSink {
    return {
      reserve: () => {
        if (this.suspect !== undefined) return 0;
        const { concurrency, batchSize } = this.options;
        const free = concurrency + this.loops.length * batchSize - (this.running.size + this.waiting.length + this.reserved);
        const wanted = Math.min(free, batchSize);
        // Not a few jobs at a time: a loop that reserved again right after a batch arrived, with
        // most of it still waiting, claimed 10 jobs per turn every other turn (55 on average).
        if (wanted < Math.min(batchSize, Math.max(concurrency, Math.ceil(batchSize / 2)))) return 0;
        this.reserved += wanted;
        return wanted;
      },
      startable: () => Math.max(0, this.options.concurrency - this.running.size - this.waiting.length),
      accept: (claim, reserved) => {
        this.reserved -= reserved;
        for (const job of claim.jobs) {
          const held = { job, claim, loop: loop(), abort: new HandlerAbort(), startedAt: 0 };
          if (job.cancelRequested) {
            // Marked for cancelling before it started: cancelled without running.
            this.settleCancelled(held, 0);
          } else if (this.suspect !== undefined) {
            held.loop.release(claim, [job.id]);
          } else if (job.leaseExpiries > 0) {
            this.suspect = held;
            this.releaseWaiting();
          } else {
            startsInPriorityOrder(this.waiting, held);
          }
        }
        this.startJobs();
      },
    };
  }

  private startJobs(): void {
    if (this.suspect !== undefined) {
      // Outcomes of the jobs before it are committed first: a crash must find nothing else held.
      if (this.running.size === 0 && this.loops.every((loop) => loop.settled) && !this.claiming.signal.aborted) {
        this.running.add(this.suspect);
        void this.runJob(this.suspect);
      }
      return;
    }
    while (this.running.size < this.options.concurrency && this.waiting.length > 0 && !this.claiming.signal.aborted) {
      const held = this.waiting.shift()!;
      this.running.add(held);
      void this.runJob(held);
    }
  }

  private async runJob(held: Held): Promise<void> {
    held.startedAt = performance.now();
    const view = jobView(held, this.onProgress);
    const run = runHandler(this.handlers, held, view, this.tracing);
    const timeoutMs = timeoutFor(this.options.timeoutMs, held.job);
    const { outcome, durationMs } = timeoutMs === undefined ? await run : await runWithin(run, held.abort, timeoutMs, ABORT_GRACE_MS);
    if (held === this.suspect) this.suspect = undefined;
    if (!this.running.has(held)) return; // given up on after stop({ timeoutMs }) or a cancel: already settled
    if (this.progress?.has(held.job.id) === true) await this.progress.flush(held.job.id);
    if (!this.running.delete(held)) return;
    const { settled, error, seconds } = settleOutcome(held, outcome, this.settleLimits);
    this.counters[settled]++;
    if (settled === 'lost') {
      this.loseLease(held);
      this.emitSafely('lost', view, { durationMs } satisfies RunInfo);
    } else if (settled === 'completed') {
      this.emitSafely('completed', view, outcome.ok ? outcome.result : undefined, { durationMs } satisfies RunInfo);
    } else if (settled === 'snoozed') {
      this.emitSafely('snoozed', view, { seconds: seconds!, durationMs } satisfies SnoozeInfo);
    } else if (settled === 'cancelled') {
      this.emitSafely('cancelled', view, { durationMs } satisfies RunInfo);
    } else {
      this.emitSafely('failed', view, error, { final: settled === 'failed', durationMs } satisfies FailureInfo);
    }
    this.slotFreed();
  }

  /** The ids of the jobs whose handlers run now, but those being cancelled already. */
  private runningIds(): number[] {
    const ids: number[] = [];
    for (const held of this.running) if (held.cancelled !== true) ids.push(held.job.id);
    return ids;
  }

  /**
   * Cancels running jobs that `cancel` marked: fires their handler's signal, and gives up on a
   * handler still running ABORT_GRACE_MS later (the job is cancelled, its slot freed, whatever its
   * code goes on doing). A handler that completes first completes its job.
   */
  private cancelRunning(ids: readonly number[]): void {
    const marked = new Set(ids);
    for (const held of this.running) {
      if (!marked.has(held.job.id) || held.cancelled === true) continue;
      held.cancelled = true;
      held.abort.abort(new JobCancelled(held.job.id));
      setTimeout(() => {
        if (!this.running.delete(held)) return;
        this.settleCancelled(held, performance.now() - held.startedAt);
        this.slotFreed();
      }, ABORT_GRACE_MS).unref();
    }
  }

  /** Ends a job as cancelled without waiting for its handler: settled, counted and told. */
  private settleCancelled(held: Held, durationMs: number): void {
    held.loop.cancel(held.claim, [held.job.id]);
    this.counters.cancelled++;
    this.emitSafely('cancelled', jobView(held, this.onProgress), { durationMs } satisfies RunInfo);
  }

  /** A handler's slot came free: the next jobs start, and a stop waiting for the handlers hears when none runs. */
  private slotFreed(): void {
    this.startJobs();
    if (this.running.size === 0) this.whenIdle?.();
  }

  /** Takes a handler's `job.progress` report: checked at once (a bad one throws in the handler), written soon after. */
  private reportProgress(held: Held, value: unknown): void {
    if (!(typeof value === 'number' && Number.isFinite(value)) && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      throw new JobqError(`job.progress takes a number or a plain object, not ${typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? typeof value)}`, ExitCode.usage);
    }
    const json = keptJson(value, `the progress of job ${held.job.id}`, MAX_PROGRESS_BYTES)!;
    if (this.running.has(held)) this.progress?.report(held.job.id, held.claim.token, json);
  }

  /** Fires the handler's signal of a job whose lease ran out. */
  private loseLease(held: Held): void {
    held.abort.abort(new Error(`the lease of job ${held.job.id} ran out: another worker may run it now`));
  }

  /** Something the worker rode out but someone should look at; said once, with `warning`. */
  private warn(code: WorkerWarning['code'], message: string): void {
    this.counters.warnings++;
    this.emitSafely('warning', { code, message } satisfies WorkerWarning);
  }

  /** A listener that throws must not turn a finished job into a failed one. */
  private emitSafely(event: string, ...args: unknown[]): void {
    try {
      this.emit(event, ...args);
    } catch (error) {
      if (this.listenerCount('error') > 0) this.emit('error', error);
    }
  }

  /** Claimed jobs that never started go back to the queue, due at once (a suspect that has not started too, when stopping). */
  private releaseWaiting(): void {
    const byClaim = new Map<Claim, { loop: ClaimLoop; ids: number[] }>();
    const unstarted = this.waiting.splice(0);
    if (this.claiming.signal.aborted && this.suspect !== undefined && !this.running.has(this.suspect)) unstarted.push(this.suspect);
    for (const { job, claim, loop } of unstarted) {
      const entry = byClaim.get(claim) ?? { loop, ids: [] };
      entry.ids.push(job.id);
      byClaim.set(claim, entry);
    }
    for (const [claim, { loop, ids }] of byClaim) loop.release(claim, ids);
  }

  /** Waits for running handlers; with a stop timeout, aborts them, then gives up on those that ignore it. */
  private async handlersDone(): Promise<void> {
    if (this.running.size === 0) return;
    const idle = new Promise<void>((resolve) => (this.whenIdle = resolve));
    if (this.stopTimeoutMs === undefined) return idle;
    const timeout = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(resolve, ms, 'timeout').unref());
    if ((await Promise.race([idle, timeout(this.stopTimeoutMs)])) !== 'timeout') return;
    for (const held of this.running) held.abort.abort(new Error('the worker was stopped'));
    if ((await Promise.race([idle, timeout(ABORT_GRACE_MS)])) !== 'timeout') return;
    // The handler ignores its signal: its job goes back to the queue after the retry delay.
    for (const held of this.running) {
      held.loop.fail(held.claim, held.job.id, new Error(`the worker was stopped while the handler ran (after ${this.stopTimeoutMs} ms)`));
    }
    this.running.clear();
  }

  /**
   * For `once`: is anything due that this worker could claim? Jobs of paused kinds do not count.
   * A worker of every kind that sees kinds paused has only its loops' word for it: they found
   * nothing (the server-side check cannot leave kinds out).
   */
  private async hasUnpausedDueWork(context: WorkerContext, db: Database): Promise<boolean> {
    const paused = new Set(this.loops.flatMap((loop) => loop.pausedKinds));
    if (paused.size === 0) return context.hasDueWork(db, this.handlers.kinds);
    // Not the loops' empty turns: a loop reads its own lane, and another's jobs only once they waited (a worker stopped with a job just enqueued).
    if (this.handlers.kinds === undefined) return context.hasDueWork(db, undefined, [...paused]);
    const kinds = this.handlers.kinds.filter((kind) => !paused.has(kind));
    return kinds.length > 0 && context.hasDueWork(db, kinds);
  }

  /** With `once`: stops when every loop found nothing, nothing is in hand, and nothing is due. */
  private async stopIfDrained(hasDueWork: () => Promise<boolean>): Promise<void> {
    if (this.checkingDrained || this.claiming.signal.aborted) return;
    if (this.running.size > 0 || this.waiting.length > 0 || this.suspect !== undefined || !this.loops.every((loop) => loop.idle)) return;
    this.checkingDrained = true;
    try {
      // A check that failed (on Galera a read can lose to a replicated write) says nothing: the
      // loops' next idle turn asks again.
      const due = await hasDueWork().catch(() => true);
      if (!due && this.running.size === 0 && this.waiting.length === 0 && this.suspect === undefined) this.claiming.abort();
    } finally {
      this.checkingDrained = false;
    }
  }
}

export interface Worker<Tasks extends TaskMap = AnyTasks> {
  on(event: 'completed', listener: (job: JobOf<Tasks>, result: unknown, info: RunInfo) => void): this;
  on(event: 'failed', listener: (job: JobOf<Tasks>, error: unknown, info: FailureInfo) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'connection', listener: (event: ConnectionEvent) => void): this;
  on(event: 'warning', listener: (warning: WorkerWarning) => void): this;
  on(event: 'lost', listener: (job: JobOf<Tasks>, info: RunInfo) => void): this;
  on(event: 'snoozed', listener: (job: JobOf<Tasks>, info: SnoozeInfo) => void): this;
  on(event: 'cancelled', listener: (job: JobOf<Tasks>, info: RunInfo) => void): this;
  once(event: 'completed', listener: (job: JobOf<Tasks>, result: unknown, info: RunInfo) => void): this;
  once(event: 'failed', listener: (job: JobOf<Tasks>, error: unknown, info: FailureInfo) => void): this;
  once(event: 'error', listener: (error: Error) => void): this;
  once(event: 'connection', listener: (event: ConnectionEvent) => void): this;
  once(event: 'warning', listener: (warning: WorkerWarning) => void): this;
  once(event: 'lost', listener: (job: JobOf<Tasks>, info: RunInfo) => void): this;
  once(event: 'snoozed', listener: (job: JobOf<Tasks>, info: SnoozeInfo) => void): this;
  once(event: 'cancelled', listener: (job: JobOf<Tasks>, info: RunInfo) => void): this;
}

/**
 * Adds a claimed job to those waiting to start, after every job of the same or a smaller
 * priority: jobs start by priority, then in the order claimed. Two claim loops can each bring
 * part of the most urgent jobs, filled up with less urgent ones; without this, a batch that came
 * first ran its less urgent jobs ahead of the other batch's urgent ones.
 */
function startsInPriorityOrder(waiting: Held[], held: Held): void {
  let at = waiting.length;
  while (at > 0 && waiting[at - 1]!.job.priority > held.job.priority) at--;
  waiting.splice(at, 0, held);
}

const sum = <T>(items: readonly T[], of: (item: T) => number): number => items.reduce((total, item) => total + of(item), 0);

/** A claim loop's wake-ups: enqueues of this process wake it by a call, those of other processes by the doorbell (counted). */
function wakeUpsOf(doorbell: Doorbell, { wakeOnEnqueue, wakeWorkers }: Pick<WorkerContext, 'wakeOnEnqueue' | 'wakeWorkers'>, counted: () => void): WakeUps {
  return {
    subscribe: (wake) => {
      const ends = [
        wakeOnEnqueue(wake),
        doorbell.subscribe((newest) => {
          if (newest === undefined) counted();
          wake(newest);
        }),
      ];
      return () => ends.forEach((end) => end());
    },
    idle: () => doorbell.idle(),
    madeDue: wakeWorkers,
  };
}
