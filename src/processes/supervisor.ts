import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ExitCode, type ExitCodeValue } from '../errors.js';
import { JobQueue } from '../queue/job-queue.js';
import type { CandidatePick, QueueStats } from '../queue/types.js';
import type { WorkerOptions } from '../worker/options.js';
import { ClaimGate } from './claim-gate.js';
import { SUPERVISOR_PID_ENV, type ChildMessage, type ParentMessage, type WorkerConfig } from './messages.js';

export interface ProcessingOptions {
  url: string;
  table: string;
  generators: number;
  consumers: number;
  batchSize: number;
  commitEvery: number;
  /** Jobs to generate in all; undefined = until stopped. */
  jobs?: number;
  durationSeconds?: number;
  untilEmpty: boolean;
  workMs: number;
  pick: CandidatePick;
  keepDone: boolean;
  leaseSeconds: number;
  maxAttempts: number;
  /** Claim lines are not wanted (--quiet): consumers report counts only. */
  quiet: boolean;
  /**
   * `jobq work --consumers N`: processes running `queue.work` with the user's handler module, on
   * these kinds only (undefined: all); --until-empty then waits for these kinds only.
   */
  handlerWorkers?: { count: number; handler: string; kinds?: string[]; options: WorkerOptions };
  /** With untilEmpty: stop when nothing is due now, leaving delayed jobs for later (`work --once`). */
  ignoreDelayed?: boolean;
}

/** What the supervisor tells its caller while it runs; the CLI turns these into lines. */
export interface ProcessingEvents {
  claimed(consumer: number, ids: readonly number[]): void;
  failedJobs(consumer: number, ids: readonly number[]): void;
  progress(generator: number, counter: number): void;
  jobFailed(consumer: number, id: number, attempt: number, error: string, final: boolean): void;
  connection(worker: string, state: 'lost' | 'restored', detail: string): void;
  workerExited(worker: string, how: string, next: 'restarting' | 'stopping the run'): void;
}

export interface ProcessingSummary {
  generated: number;
  consumed: number;
  /** Jobs a consumer processed but no longer owned when it came to delete them. */
  lostOwnership: number;
  claims: number;
  emptyClaims: number;
  movedToFailed: number;
  /** Handler failures that were sent back to the queue for another attempt. */
  retriedAfterError: number;
  deadlockRetries: number;
  lockWaitRetries: number;
  crashes: number;
  elapsedSeconds: number;
  /** Seconds from the first claim to the last delete: the consuming window, without start-up. */
  consumingSeconds?: number;
  stats: QueueStats;
  exitCode: ExitCodeValue;
  /** Why the run ended badly, when it did. */
  problem?: string;
}

const CRASH_WINDOW_MS = 60_000;
const CRASHES_TOLERATED = 5;
const UNTIL_EMPTY_POLL_MS = 200;

interface Slot {
  name: string;
  config: WorkerConfig;
  child?: ChildProcess;
  inserted: number;
  finished: boolean;
}

// A worker holds one connection and one batch: V8's default 16 MiB semi-spaces are most of its
// RSS. Measured in the bench: 75 MiB peak per worker with the default, 62-68 with 2 MiB, 59-69
// with 1 MiB (the more jobs a worker moves, the higher). V8's helper threads (concurrent GC and
// compilation) took 3-4 MiB more: without them, 60-62 MiB after a million jobs, at no
// measurable cost in jobs/s. About 41 MiB of that is the node binary's own mapped pages.
const WORKER_NODE_OPTIONS = ['--max-semi-space-size=1', '--single-threaded'];

const workerScript = (role: WorkerConfig['role']) => fileURLToPath(new URL(`./${role}.js`, import.meta.url));

/** How a worker of this role is named in messages. */
const workerName = (role: WorkerConfig['role'], number: number) => `${role === 'handler-worker' ? 'worker' : role} ${number}`;

/**
 * Forks the generator and consumer children, relays what they report, restarts one that crashes
 * (with backoff; a crash loop ends the run) and stops them all gracefully on request, on
 * --duration, or once the queue is empty (--until-empty).
 */
export class Supervisor {
  private readonly slots: Slot[] = [];
  private readonly crashTimes: number[] = [];
  private readonly started = Date.now();
  private stopping = false;
  private problem: { message: string; exitCode: ExitCodeValue } | undefined;
  private readonly totals = { generated: 0, consumed: 0, lost: 0, claims: 0, emptyClaims: 0, failed: 0, retried: 0, deadlocks: 0, lockWaits: 0 };
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly gate: ClaimGate;
  private firstClaimAt: number | undefined;
  private lastSettleAt: number | undefined;
  private finish!: () => void;
  private readonly allExited = new Promise<void>((resolve) => (this.finish = resolve));

  constructor(
    private readonly options: ProcessingOptions,
    private readonly events: ProcessingEvents,
  ) {
    this.gate = new ClaimGate(Math.max(1, Math.min(availableParallelism() + 1, options.consumers)));
  }

  /** Runs until the children have all exited, then returns the summary with fresh queue stats. */
  async run(queue: JobQueue): Promise<ProcessingSummary> {
    const { options } = this;
    const share = (i: number) =>
      options.jobs === undefined ? undefined : Math.floor(options.jobs / options.generators) + (i <= options.jobs % options.generators ? 1 : 0);
    for (let i = 1; i <= options.generators; i++) {
      const quota = share(i);
      this.slots.push({
        name: workerName('generator', i),
        config: { role: 'generator', number: i, url: options.url, table: options.table, commitEvery: options.commitEvery, ...(quota !== undefined && { quota }) },
        inserted: 0,
        finished: false,
      });
    }
    for (let i = 1; i <= options.consumers; i++) {
      const { url, table, batchSize, pick, workMs, keepDone, leaseSeconds, maxAttempts, quiet } = options;
      this.addSlot({ role: 'consumer', number: i, url, table, batchSize, pick, workMs, keepDone, leaseSeconds, maxAttempts, reportIds: !quiet });
    }
    const workers = options.handlerWorkers;
    for (let i = 1; i <= (workers?.count ?? 0); i++) {
      const { handler, kinds, options: workerOptions } = workers!;
      this.addSlot({ role: 'handler-worker', number: i, url: options.url, table: options.table, handler, ...(kinds !== undefined && { kinds }), options: workerOptions });
    }
    for (const slot of this.slots) this.spawn(slot);
    if (options.durationSeconds !== undefined) this.timers.push(setTimeout(() => this.stop(), options.durationSeconds * 1000));
    if (options.untilEmpty) this.watchForEmptyQueue(queue);
    this.maybeFinish();
    await this.allExited;
    for (const timer of this.timers) clearTimeout(timer);
    const stats = await queue.stats();
    return {
      generated: this.totals.generated,
      consumed: this.totals.consumed,
      lostOwnership: this.totals.lost,
      claims: this.totals.claims,
      emptyClaims: this.totals.emptyClaims,
      movedToFailed: this.totals.failed,
      retriedAfterError: this.totals.retried,
      deadlockRetries: this.totals.deadlocks,
      lockWaitRetries: this.totals.lockWaits,
      crashes: this.crashTimes.length,
      elapsedSeconds: (Date.now() - this.started) / 1000,
      consumingSeconds: this.firstClaimAt === undefined || this.lastSettleAt === undefined ? 0 : (this.lastSettleAt - this.firstClaimAt) / 1000,
      stats,
      exitCode: this.problem?.exitCode ?? (this.crashTimes.length > 0 ? ExitCode.workerCrashed : ExitCode.ok),
      ...(this.problem !== undefined
        ? { problem: this.problem.message }
        : this.crashTimes.length > 0 && { problem: `${this.crashTimes.length} worker crash(es); they were restarted and their leases recovered their jobs` }),
    };
  }

  private addSlot(config: WorkerConfig): void {
    this.slots.push({ name: workerName(config.role, config.number), config, inserted: 0, finished: false });
  }

  /** Graceful stop: generators commit what they have, consumers settle the batch in hand. */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const slot of this.slots) if (slot.child?.connected) slot.child.send({ type: 'stop' });
  }

  /** Ends every child at once (second Ctrl-C); leases hand their claims to the next run. */
  kill(): void {
    this.stopping = true;
    for (const slot of this.slots) slot.child?.kill('SIGKILL');
  }

  private spawn(slot: Slot): void {
    const config = slot.config.role === 'generator' && slot.config.quota !== undefined
      ? { ...slot.config, quota: slot.config.quota - slot.inserted }
      : slot.config;
    // Only the worker's number goes on its command line; the configuration, URL and password
    // included, goes over IPC, where `ps` cannot show it.
    const child = fork(workerScript(config.role), [String(config.number)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: WORKER_NODE_OPTIONS,
      env: { ...process.env, [SUPERVISOR_PID_ENV]: String(process.pid) },
    });
    child.send({ type: 'config', config } satisfies ParentMessage);
    slot.child = child;
    let fatal: Extract<ChildMessage, { type: 'fatal' }> | undefined;
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'fatal') fatal = message;
      else if (message.type === 'turn') this.gate.acquire(child, (lane) => (child.connected ? child.send({ type: 'go', lane }) : this.gate.release(child)));
      else if (message.type === 'turn-done') this.gate.release(child);
      else this.onMessage(slot, message);
    });
    child.on('exit', (code, signal) => {
      this.gate.releaseAll(child);
      this.onExit(slot, code, signal, fatal);
    });
  }

  private onMessage(slot: Slot, message: ChildMessage): void {
    const { number } = slot.config;
    switch (message.type) {
      case 'inserted': {
        const before = slot.inserted;
        slot.inserted += message.count;
        this.totals.generated += message.count;
        // The article's progress line, every 1000 jobs of this generator.
        for (let mark = Math.floor(before / 1000) + 1; mark * 1000 <= slot.inserted; mark++) this.events.progress(number, mark * 1000);
        break;
      }
      case 'cycle':
        this.totals.consumed += message.settled;
        this.totals.lost += message.lost;
        if (message.settled + message.lost > 0) this.lastSettleAt = Date.now();
        if (message.claimed > 0 || message.failedIds.length > 0) {
          this.firstClaimAt ??= Date.now();
          this.totals.claims++;
        } else if (message.candidates > 0) {
          this.totals.claims++;
          this.totals.emptyClaims++;
        }
        if (message.ids.length > 0) this.events.claimed(number, message.ids);
        if (message.failedIds.length > 0) {
          this.totals.failed += message.failedIds.length;
          this.events.failedJobs(number, message.failedIds);
        }
        break;
      case 'worked':
        this.totals.consumed += message.counters.completed;
        this.totals.claims += message.counters.claims;
        this.totals.emptyClaims += message.counters.emptyClaims;
        if (message.counters.completed > 0) {
          this.firstClaimAt ??= Date.now();
          this.lastSettleAt = Date.now();
        }
        break;
      case 'job-failed':
        if (message.final) this.totals.failed++;
        else this.totals.retried++;
        this.events.jobFailed(number, message.id, message.attempt, message.error, message.final);
        break;
      case 'exiting':
      case 'turn':
      case 'turn-done':
        break;
      case 'connection':
        this.events.connection(slot.name, message.state, message.detail);
        break;
      case 'retries':
        this.totals.deadlocks += message.deadlocks;
        this.totals.lockWaits += message.lockWaits;
        break;
    }
  }

  private onExit(slot: Slot, code: number | null, signal: NodeJS.Signals | null, fatal: Extract<ChildMessage, { type: 'fatal' }> | undefined): void {
    slot.child = undefined;
    const expected = code === 0 && (this.stopping || slot.config.role === 'generator');
    if (expected) {
      slot.finished = true;
    } else if (fatal !== undefined && fatal.exitCode !== ExitCode.internal) {
      // The worker met an error that a restart cannot fix (no table, access denied, ...).
      slot.finished = true;
      this.problem ??= { message: `${slot.name}: ${fatal.message}`, exitCode: fatal.exitCode as ExitCodeValue };
      this.events.workerExited(slot.name, fatal.message, 'stopping the run');
      this.stop();
    } else {
      this.recordCrash(slot, fatal?.message ?? (signal !== null ? `killed by ${signal}` : `exit code ${code}`));
    }
    this.maybeFinish();
  }

  private recordCrash(slot: Slot, how: string): void {
    const now = Date.now();
    this.crashTimes.push(now);
    const recent = this.crashTimes.filter((t) => now - t < CRASH_WINDOW_MS).length;
    if (this.stopping) {
      slot.finished = true;
      this.events.workerExited(slot.name, how, 'stopping the run');
      return;
    }
    if (recent > CRASHES_TOLERATED) {
      slot.finished = true;
      this.problem ??= {
        message: `${recent} worker crashes within a minute; stopped the run (last: ${slot.name}, ${how})`,
        exitCode: ExitCode.workerCrashed,
      };
      this.events.workerExited(slot.name, how, 'stopping the run');
      this.stop();
      return;
    }
    this.events.workerExited(slot.name, how, 'restarting');
    const delay = Math.min(250 * 2 ** (recent - 1), 5_000);
    this.timers.push(setTimeout(() => (this.stopping ? ((slot.finished = true), this.maybeFinish()) : this.spawn(slot)), delay));
  }

  private maybeFinish(): void {
    if (this.slots.every((s) => s.child === undefined && (s.finished || this.stopping))) this.finish();
  }

  private watchForEmptyQueue(queue: JobQueue): void {
    const generatorsDone = () => this.slots.every((s) => s.config.role !== 'generator' || s.finished);
    const poll = async () => {
      if (this.stopping) return;
      const kinds = this.options.handlerWorkers?.kinds;
      const pending = await queue.hasPendingWork({ includeDelayed: !this.options.ignoreDelayed, ...(kinds !== undefined && { kinds }) });
      if (generatorsDone() && !pending) return this.stop();
      this.timers.push(setTimeout(() => void poll().catch(() => this.timers.push(setTimeout(poll, UNTIL_EMPTY_POLL_MS))), UNTIL_EMPTY_POLL_MS));
    };
    void poll();
  }
}
