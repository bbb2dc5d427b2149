import type { ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { startingWithServer } from '../config/database-url.js';
import type { ConnectionEvent } from '../db/database.js';
import { ExitCode, type ExitCodeValue } from '../errors.js';
import { JobQueue } from '../queue/job-queue.js';
import type { CandidatePick, QueueStats } from '../queue/types.js';
import type { WorkerOptions } from '../worker/options.js';
import { ClaimGate } from './claim-gate.js';
import { forkWorker, send, type FatalReport } from './forked-worker.js';
import type { ChildMessage, WorkerConfig } from './messages.js';
import { RestartPolicy } from './restart-policy.js';
import { RunTotals } from './run-totals.js';
import { watchStopRules } from './stop-rules.js';

export interface ProcessingOptions {
  url: string;
  table: string;
  replica?: { url: string; maxLagSeconds: number };
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
  /** Handler failures per job before it goes to `failed` (handler workers), for their lines. */
  maxAttempts?: number;
  /** Claim lines are not wanted (--quiet): consumers report counts only. */
  quiet: boolean;
  /**
   * `jobq work --consumers N`: processes running `queue.work` with the user's handler module, on
   * these kinds only (undefined: all); --until-empty then waits for these kinds only.
   */
  handlerWorkers?: { count: number; handler: string; kinds?: string[]; options: WorkerOptions; metrics?: { host: string; port: number } };
  /** With untilEmpty: stop when nothing is due now, leaving delayed jobs for later (`work --once`). */
  ignoreDelayed?: boolean;
}

/** What the supervisor tells its caller while it runs; the CLI turns these into lines. */
export interface ProcessingEvents {
  claimed(consumer: number, ids: readonly number[]): void;
  failedJobs(consumer: number, ids: readonly number[]): void;
  progress(generator: number, counter: number): void;
  jobFailed(consumer: number, id: number, attempt: number, error: string, final: boolean): void;
  connection(worker: string, state: ConnectionEvent['state'], detail: string): void;
  warning(worker: string, message: string): void;
  workerExited(worker: string, how: string, next: 'restarting' | 'stopping the run'): void;
  metricsServed(worker: string, url: string): void;
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

interface Slot {
  name: string;
  config: WorkerConfig;
  child?: ChildProcess;
  inserted: number;
  finished: boolean;
}

/** How a worker of this role is named in messages. */
const workerName = (role: WorkerConfig['role'], number: number) => `${role === 'handler-worker' ? 'worker' : role} ${number}`;

/**
 * Runs the generator and consumer children: starts them (forked-worker.ts), relays what they
 * report to the caller and into the totals (run-totals.ts), restarts one that crashes
 * (restart-policy.ts) and stops them all gracefully on request or when a stop rule says the run
 * is over (stop-rules.ts).
 */
export class Supervisor {
  private readonly slots: Slot[] = [];
  private readonly restarts = new RestartPolicy();
  private readonly totals = new RunTotals();
  private readonly started = Date.now();
  private stopping = false;
  private problem: { message: string; exitCode: ExitCodeValue } | undefined;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private stopWatching = () => {};
  private gate!: ClaimGate;
  private finish!: () => void;
  private readonly allExited = new Promise<void>((resolve) => (this.finish = resolve));

  constructor(
    private readonly options: ProcessingOptions,
    private readonly events: ProcessingEvents,
  ) {
  }

  /** Runs until the children have all exited, then returns the summary with fresh queue stats. */
  async run(queue: JobQueue): Promise<ProcessingSummary> {
    const { options } = this;
    const turns = Math.max(1, Math.min(availableParallelism() + 1, options.consumers));
    // A partitioned table gets a lane per partition (each turn reads one), still `turns` at once.
    const { partitions } = await queue.layout();
    this.gate = new ClaimGate(turns, Math.max(turns, partitions));
    for (const config of workerConfigs(options)) this.slots.push({ name: workerName(config.role, config.number), config, inserted: 0, finished: false });
    for (const slot of this.slots) this.spawn(slot);
    this.stopWatching = watchStopRules(
      { ...options, ...(options.handlerWorkers?.kinds !== undefined && { kinds: options.handlerWorkers.kinds }) },
      queue,
      () => this.slots.every((s) => s.config.role !== 'generator' || s.finished),
      () => this.stop(),
    );
    this.maybeFinish();
    await this.allExited;
    this.stopWatching();
    for (const timer of this.restartTimers) clearTimeout(timer);
    const stats = await queue.stats();
    const { counts } = this.totals;
    const crashes = this.restarts.crashes;
    return {
      generated: counts.generated,
      consumed: counts.consumed,
      lostOwnership: counts.lost,
      claims: counts.claims,
      emptyClaims: counts.emptyClaims,
      movedToFailed: counts.failed,
      retriedAfterError: counts.retried,
      deadlockRetries: counts.deadlocks,
      lockWaitRetries: counts.lockWaits,
      crashes,
      elapsedSeconds: (Date.now() - this.started) / 1000,
      consumingSeconds: this.totals.consumingSeconds,
      stats,
      exitCode: this.problem?.exitCode ?? (crashes > 0 ? ExitCode.workerCrashed : ExitCode.ok),
      ...(this.problem !== undefined
        ? { problem: this.problem.message }
        : crashes > 0 && { problem: `${crashes} worker crash(es); they were restarted and their leases recovered their jobs` }),
    };
  }

  /** Graceful stop: generators commit what they have, consumers settle the batch in hand. */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.stopWatching();
    for (const slot of this.slots) if (slot.child?.connected) send(slot.child, { type: 'stop' });
  }

  /** Ends every child at once (second Ctrl-C); leases hand their claims to the next run. */
  kill(): void {
    this.stopping = true;
    for (const slot of this.slots) slot.child?.kill('SIGKILL');
  }

  private spawn(slot: Slot): void {
    // A restarted generator inserts only what is left of its quota.
    const config = slot.config.role === 'generator' && slot.config.quota !== undefined
      ? { ...slot.config, quota: slot.config.quota - slot.inserted }
      : slot.config;
    slot.child = forkWorker(config, this.gate, {
      message: (message) => this.onMessage(slot, message),
      exit: (code, signal, fatal) => this.onExit(slot, code, signal, fatal),
    });
  }

  private onMessage(slot: Slot, message: ChildMessage): void {
    this.totals.add(message);
    const { number } = slot.config;
    switch (message.type) {
      case 'inserted': {
        const before = slot.inserted;
        slot.inserted += message.count;
        // The article's progress line, every 1000 jobs of this generator.
        for (let mark = Math.floor(before / 1000) + 1; mark * 1000 <= slot.inserted; mark++) this.events.progress(number, mark * 1000);
        break;
      }
      case 'cycle':
        if (message.ids.length > 0) this.events.claimed(number, message.ids);
        if (message.failedIds.length > 0) this.events.failedJobs(number, message.failedIds);
        break;
      case 'job-failed':
        this.events.jobFailed(number, message.id, message.attempt, message.error, message.final);
        break;
      case 'connection':
        this.events.connection(slot.name, message.state, message.detail);
        break;
      case 'warning':
        this.events.warning(slot.name, message.message);
        break;
      case 'metrics':
        this.events.metricsServed(slot.name, message.url);
        break;
      default:
        break;
    }
  }

  private onExit(slot: Slot, code: number | null, signal: NodeJS.Signals | null, fatal: FatalReport | undefined): void {
    slot.child = undefined;
    const expected = code === 0 && (this.stopping || slot.config.role === 'generator');
    if (expected) {
      slot.finished = true;
    } else if (fatal !== undefined && fatal.exitCode !== ExitCode.internal) {
      // The worker met an error that a restart cannot fix (no table, access denied, ...).
      this.endRun(slot, fatal.message, `${slot.name}: ${fatal.message}`, fatal.exitCode as ExitCodeValue);
    } else {
      this.onCrash(slot, fatal?.message ?? (signal !== null ? `killed by ${signal}` : `exit code ${code}`));
    }
    this.maybeFinish();
  }

  private onCrash(slot: Slot, how: string): void {
    const next = this.restarts.onCrash();
    if (this.stopping) {
      slot.finished = true;
      this.events.workerExited(slot.name, how, 'stopping the run');
    } else if ('giveUp' in next) {
      this.endRun(slot, how, `${next.giveUp}; stopped the run (last: ${slot.name}, ${how})`, ExitCode.workerCrashed);
    } else {
      this.events.workerExited(slot.name, how, 'restarting');
      const timer = setTimeout(() => {
        this.restartTimers.delete(timer);
        if (!this.stopping) return this.spawn(slot);
        slot.finished = true;
        this.maybeFinish();
      }, next.restartInMs);
      this.restartTimers.add(timer);
    }
  }

  /** A worker's exit that ends the run: the first such problem sets the exit code. */
  private endRun(slot: Slot, how: string, problem: string, exitCode: ExitCodeValue): void {
    slot.finished = true;
    this.problem ??= { message: problem, exitCode };
    this.events.workerExited(slot.name, how, 'stopping the run');
    this.stop();
  }

  private maybeFinish(): void {
    if (this.slots.every((s) => s.child === undefined && (s.finished || this.stopping))) this.finish();
  }
}

/**
 * One configuration per child: the generators (the jobs shared out among them), then the consumers
 * or handler workers. When the URL lists several servers (the nodes of a Galera cluster), the
 * children of each role take turns at which one they try first, so that they spread over all of
 * them; the rest of the list is where each goes when its node is lost.
 */
function workerConfigs(options: ProcessingOptions): WorkerConfig[] {
  const { table } = options;
  const replica = options.replica === undefined ? {} : { replica: options.replica };
  const urlFor = (i: number) => startingWithServer(options.url, i - 1);
  const share = (i: number) =>
    options.jobs === undefined ? undefined : Math.floor(options.jobs / options.generators) + (i <= options.jobs % options.generators ? 1 : 0);
  const configs: WorkerConfig[] = [];
  for (let i = 1; i <= options.generators; i++) {
    const quota = share(i);
    configs.push({ role: 'generator', number: i, url: urlFor(i), table, commitEvery: options.commitEvery, ...(quota !== undefined && { quota }) });
  }
  const { batchSize, pick, workMs, keepDone, leaseSeconds, quiet } = options;
  for (let i = 1; i <= options.consumers; i++) {
    configs.push({ role: 'consumer', number: i, url: urlFor(i), table, ...replica, batchSize, pick, workMs, keepDone, leaseSeconds, reportIds: !quiet });
  }
  const workers = options.handlerWorkers;
  for (let i = 1; i <= (workers?.count ?? 0); i++) {
    const { handler, kinds, metrics } = workers!;
    configs.push({
      role: 'handler-worker',
      number: i,
      url: urlFor(i),
      ...replica,
      table,
      handler,
      ...(kinds !== undefined && { kinds }),
      options: workers!.options,
      // Process N on port + N - 1, each on any free one for port 0.
      ...(metrics !== undefined && { metrics: { host: metrics.host, port: metrics.port === 0 ? 0 : metrics.port + i - 1 } }),
    });
  }
  return configs;
}
