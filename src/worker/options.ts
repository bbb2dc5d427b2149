import { ExitCode, JobqError } from '../errors.js';
import { checkLeaseSeconds, DEFAULTS, MAX_BATCH_SIZE } from '../queue/defaults.js';

/** How `queue.work` runs; every field has a default (see src/queue/defaults.ts). */
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

/** The options with their defaults, or a one-line error naming the first bad one. */
export function resolveWorkerOptions(options: WorkerOptions = {}): ResolvedWorkerOptions {
  const resolved: ResolvedWorkerOptions = {
    concurrency: options.concurrency ?? DEFAULTS.concurrency,
    batchSize: options.batchSize ?? DEFAULTS.batchSize,
    leaseSeconds: options.leaseSeconds ?? DEFAULTS.leaseSeconds,
    maxAttempts: options.maxAttempts ?? DEFAULTS.maxAttempts,
    retryDelayMs: options.retryDelayMs ?? DEFAULTS.retryDelayMs,
    keepDone: options.keepDone ?? DEFAULTS.keepDone,
    once: options.once ?? DEFAULTS.once,
  };
  wholeNumber('concurrency', resolved.concurrency, 1, 10_000);
  wholeNumber('batchSize', resolved.batchSize, 1, MAX_BATCH_SIZE);
  wholeNumber('maxAttempts', resolved.maxAttempts, 1, 1000);
  wholeNumber('retryDelayMs', resolved.retryDelayMs, 0, 3_600_000);
  checkLeaseSeconds(resolved.leaseSeconds);
  return resolved;
}

function wholeNumber(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new JobqError(`${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(value)}`, ExitCode.usage);
  }
}
