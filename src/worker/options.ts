import { DEFAULTS } from '../config/defaults.js';
import { checkNumber, OPTIONS } from '../config/options.js';

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
  /** Wait before the first retry of a failed job, doubling per attempt (default 1000). */
  retryDelayMs?: number;
  /** Keep finished jobs as `done` instead of deleting them (default false). */
  keepDone?: boolean;
  /** Stop by itself once nothing due is left (default false). */
  once?: boolean;
}

export type ResolvedWorkerOptions = Required<WorkerOptions>;

/** The options with their defaults, or a one-line error naming the first bad one (the rules of src/config/options.ts). */
export function resolveWorkerOptions(options: WorkerOptions = {}): ResolvedWorkerOptions {
  return {
    concurrency: checkNumber(OPTIONS.concurrency, options.concurrency),
    batchSize: checkNumber(OPTIONS.batchSize, options.batchSize),
    leaseSeconds: checkNumber(OPTIONS.leaseSeconds, options.leaseSeconds),
    maxAttempts: checkNumber(OPTIONS.maxAttempts, options.maxAttempts),
    retryDelayMs: checkNumber(OPTIONS.retryDelayMs, options.retryDelayMs),
    keepDone: options.keepDone ?? DEFAULTS.keepDone,
    once: options.once ?? DEFAULTS.once,
  };
}
