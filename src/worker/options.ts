import { DEFAULTS } from '../config/defaults.js';
import { checkNumber, OPTIONS } from '../config/options.js';
import { EVERY_KIND } from '../claim/sql/limits.js';
import { checkKind } from '../queue/new-jobs.js';

/** How `queue.work` runs; every field has a default (see src/config/defaults.ts). */
export interface WorkerOptions {
  /** Handlers running at once (default 10). */
  concurrency?: number;
  /**
   * Jobs one claim takes (default 200). The worker holds up to `concurrency` + 2 x `batchSize`
   * jobs; lower it for slow jobs, so that other workers get a share sooner.
   */
  batchSize?: number;
  /** Seconds a claim holds its jobs (default 60); renewed while they wait and run. */
  leaseSeconds?: number;
  /** Runs whose handler threw before the job goes to `failed` (default 5); runs handed back unstarted or whose lease ran out do not count. */
  maxAttempts?: number;
  /** Times a handler may put its job off with `job.snooze` before the job goes to `failed` (default 100). */
  maxSnoozes?: number;
  /** Wait before the first retry of a failed job, doubling per attempt (default 1000). */
  retryDelayMs?: number;
  /** Keep finished jobs as `done` instead of deleting them (default false). */
  keepDone?: boolean;
  /**
   * Keep the jobs whose handler returned a value as `done`, with that value (JSON, at most 64 KiB),
   * for `queue.job` and `queue.waitFor` to read and `prune` to remove (default false); jobs whose
   * handler returned nothing are deleted unless `keepDone`. With `keepDone`, every result is kept.
   */
  keepResults?: boolean;
  /** Stop by itself once nothing due is left (default false). */
  once?: boolean;
  /**
   * The longest an idle worker waits before it looks at an empty queue again, in milliseconds
   * (default 20): what a job enqueued by another process may wait before it starts. Jobs
   * enqueued through a queue of the worker's own process wake it at once (see `queue.wakeWorkers`).
   */
  pollIntervalMs?: number;
  /**
   * How long the worker waits after a claim that took only a few jobs (under a quarter of those
   * it had room for) before it claims again, in milliseconds (default 4): jobs that arrive one at
   * a time are then claimed several at once, which spares the server a commit per job. 0 claims
   * again at once: jobs start a few milliseconds sooner while they trickle in, and the server
   * spends more CPU on claims (see "When a new job starts" in docs/library.md).
   */
  lightClaimPauseMs?: number;
  /**
   * How long a handler may run, in milliseconds: one number for every kind, or per kind
   * (`{ email: 30_000, '*': 300_000 }`, `'*'` for every kind not named); default: no limit. When
   * it passes, the handler's `job.signal` fires and the run fails with "timed out after N ms":
   * retried, or failed once its attempts are used up. A handler that ignores the signal is given
   * up on a second later: its job is settled and its slot freed, though its code may go on.
   */
  timeoutMs?: number | Readonly<Record<string, number>>;
}

export type ResolvedWorkerOptions = Required<Omit<WorkerOptions, 'timeoutMs'>> & {
  /** Per kind, `'*'` for every kind not named; empty: no timeout. */
  timeoutMs: Readonly<Record<string, number>>;
};

/** The options with their defaults, or a one-line error naming the first bad one (the rules of src/config/options.ts). */
export function resolveWorkerOptions(options: WorkerOptions = {}): ResolvedWorkerOptions {
  return {
    concurrency: checkNumber(OPTIONS.concurrency, options.concurrency),
    batchSize: checkNumber(OPTIONS.batchSize, options.batchSize),
    leaseSeconds: checkNumber(OPTIONS.leaseSeconds, options.leaseSeconds),
    maxAttempts: checkNumber(OPTIONS.maxAttempts, options.maxAttempts),
    maxSnoozes: checkNumber(OPTIONS.maxSnoozes, options.maxSnoozes),
    retryDelayMs: checkNumber(OPTIONS.retryDelayMs, options.retryDelayMs),
    keepDone: options.keepDone ?? DEFAULTS.keepDone,
    keepResults: options.keepResults ?? DEFAULTS.keepResults,
    once: options.once ?? DEFAULTS.once,
    pollIntervalMs: checkNumber(OPTIONS.pollIntervalMs, options.pollIntervalMs),
    lightClaimPauseMs: checkNumber(OPTIONS.lightClaimPauseMs, options.lightClaimPauseMs),
    timeoutMs: resolveTimeouts(options.timeoutMs),
  };
}

/** `timeoutMs` per kind (`'*'`: every other kind), each checked. */
function resolveTimeouts(timeoutMs: WorkerOptions['timeoutMs']): Readonly<Record<string, number>> {
  if (timeoutMs === undefined) return {};
  if (typeof timeoutMs !== 'object' || timeoutMs === null) return { [EVERY_KIND]: checkNumber(OPTIONS.timeoutMs, timeoutMs) };
  return Object.fromEntries(
    Object.entries(timeoutMs).map(([kind, ms]) => [kind === EVERY_KIND ? kind : checkKind(kind, 'timeoutMs'), checkNumber({ ...OPTIONS.timeoutMs, name: `timeoutMs of ${JSON.stringify(kind)}` }, ms)]),
  );
}
