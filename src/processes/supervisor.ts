import type { ChildProcess } from 'node:child_process';
import type { ConnectionEvent } from '../db/connection-events.js';
import { ExitCode, type ExitCodeValue } from '../errors.js';
import { JobQueue } from '../job-queue.js';
import type { QueueStats } from '../queue/types.js';
import { ClaimGate } from '../claim/claim-gate.js';
import type { ChildSpec } from './child-spec.js';
import { forkWorker, send, type FatalReport } from './forked-worker.js';
import type { ChildMessage } from './messages.js';
import { RestartPolicy } from './restart-policy.js';
import { RunTotals, type RunCounts } from './run-totals.js';
import { watchStopRules, type StopRules } from './stop-rules.js';

/** What a supervisor runs: its children, and when the run is over. */
export interface SupervisorPlan {
  children: ChildSpec[];
  /**
   * For children that ask the supervisor for claim turns (`start-processing`'s consumers): how
   * many turns at once. Without it no gate is built, and a child that asks goes at once.
   */
  claimTurns?: number;
  stop: StopRules;
}

/** What the supervisor tells its caller while it runs; the CLI turns these into lines. */
export interface ProcessingEvents {
  claimed(consumer: number, ids: readonly number[]): void;
  failedJobs(consumer: number, ids: readonly number[]): void;
  progress(generator: number, counter: number): void;
  jobFailed(worker: number, id: number, attempt: number, maxAttempts: number, error: string, final: boolean): void;
  jobCancelled(worker: number, id: number): void;
  connection(worker: string, state: ConnectionEvent['state'], detail: string): void;
  warning(worker: string, message: string): void;
  /** `stack`: the stack of the error that ended a worker jobq has no words for, if it sent one. */
  workerExited(worker: string, how: string, next: 'restarting' | 'stopping the run', stack?: string): void;
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
  spec: ChildSpec;
  child?: ChildProcess;
  inserted: number;
  finished: boolean;
}

/**
 * Runs the children of a plan: starts them (forked-worker.ts), hands out claim turns to those
 * that ask (claim-gate.ts), relays what they report to the caller and into the totals
 * (run-totals.ts), restarts one that crashes (restart-policy.ts) and stops them all gracefully on
 * request or when a stop rule says the run is over (stop-rules.ts).
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
  private gate: ClaimGate | undefined;
  private finish!: () => void;
  private readonly allExited = new Promise<void>((resolve) => (this.finish = resolve));

  constructor(
    private readonly plan: SupervisorPlan,
    private readonly events: ProcessingEvents,
  ) {}

  /** Runs until the children have all exited, then returns the summary with fresh queue stats. */
  async run(queue: JobQueue): Promise<ProcessingSummary> {
    const turns = this.plan.claimTurns;
    if (turns !== undefined) {
      // A partitioned table gets a lane per partition (each turn reads one), still `turns` at once.
      const { partitions } = await queue.layout();
      this.gate = new ClaimGate(turns, Math.max(turns, partitions));
    }
    for (const spec of this.plan.children) this.slots.push({ spec, inserted: 0, finished: false });
    for (const slot of this.slots) this.spawn(slot);
    this.stopWatching = watchStopRules(
      this.plan.stop,
      queue,
      () => this.slots.every((s) => !s.spec.producer || s.finished),
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

  /** What the workers have reported so far. */
  get counts(): Readonly<RunCounts> {
    return this.totals.counts;
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
    // A restarted producer inserts only what is left of its quota.
    const { config } = slot.spec;
    const spec = config.quota === undefined ? slot.spec : { ...slot.spec, config: { ...config, quota: config.quota - slot.inserted } };
    slot.child = forkWorker(spec, this.gate, {
      message: (message) => this.onMessage(slot, message),
      exit: (code, signal, fatal) => this.onExit(slot, code, signal, fatal),
    });
  }

  private onMessage(slot: Slot, message: ChildMessage): void {
    this.totals.add(message);
    const { number } = slot.spec.config;
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
        this.events.jobFailed(number, message.id, message.attempt, message.maxAttempts, message.error, message.final);
        break;
      case 'job-cancelled':
        this.events.jobCancelled(number, message.id);
        break;
      case 'connection':
        this.events.connection(slot.spec.name, message.state, message.detail);
        break;
      case 'warning':
        this.events.warning(slot.spec.name, message.message);
        break;
      case 'metrics':
        this.events.metricsServed(slot.spec.name, message.url);
        break;
      default:
        break;
    }
  }

  private onExit(slot: Slot, code: number | null, signal: NodeJS.Signals | null, fatal: FatalReport | undefined): void {
    slot.child = undefined;
    const expected = code === 0 && (this.stopping || slot.spec.producer === true);
    if (expected) {
      slot.finished = true;
    } else if (fatal !== undefined && fatal.exitCode !== ExitCode.internal) {
      // The worker met an error that a restart cannot fix (no table, access denied, ...).
      this.endRun(slot, fatal.message, `${slot.spec.name}: ${fatal.message}`, fatal.exitCode as ExitCodeValue);
    } else {
      this.onCrash(slot, fatal?.message ?? (signal !== null ? `killed by ${signal}` : `exit code ${code}`), fatal?.stack);
    }
    this.maybeFinish();
  }

  private onCrash(slot: Slot, how: string, stack: string | undefined): void {
    const next = this.restarts.onCrash();
    if (this.stopping) {
      slot.finished = true;
      this.events.workerExited(slot.spec.name, how, 'stopping the run', stack);
    } else if ('giveUp' in next) {
      this.endRun(slot, how, `${next.giveUp}; stopped the run (last: ${slot.spec.name}, ${how})`, ExitCode.workerCrashed, stack);
    } else {
      this.events.workerExited(slot.spec.name, how, 'restarting', stack);
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
  private endRun(slot: Slot, how: string, problem: string, exitCode: ExitCodeValue, stack?: string): void {
    slot.finished = true;
    this.problem ??= { message: problem, exitCode };
    this.events.workerExited(slot.spec.name, how, 'stopping the run', stack);
    this.stop();
  }

  private maybeFinish(): void {
    if (this.slots.every((s) => s.child === undefined && (s.finished || this.stopping))) this.finish();
  }
}
