import { ExitCode, JobqError } from '../errors.js';

/**
 * Every default of the claim and worker path, in one place: the library, `jobq work`,
 * `start-processing` and their help texts all read them from here.
 */
export const DEFAULTS = {
  /** Handlers one worker runs at once. */
  concurrency: 10,
  /**
   * Jobs one claim takes, and so how many a worker holds ahead of its handlers. Measured with one
   * `queue.work` process draining 100,000 jobs (no-op handler, 2 cores, MariaDB 10.11): batches of
   * 50, 100, 200 and 400 drained in 5.5, 3.9, 3.3 and 3.0 s, the server spending 72, 54, 45 and
   * 45 µs per job. 200 takes most of the gain without a worker hoarding too many slow jobs.
   */
  batchSize: 200,
  /** Seconds a claim holds its jobs before another worker may take them; renewed while they run. */
  leaseSeconds: 60,
  /** Runs of a job whose handler failed (threw) before it goes to `failed`. */
  maxAttempts: 5,
  /**
   * Leases of a job that ran out in a row, without its worker settling it (the worker died, hung,
   * or the job crashed its process), before it goes to `failed`. A job whose lease ran out is run
   * alone in its worker from then on, so that a job that crashes its process takes no other job
   * down with it (see Worker's suspect).
   */
  maxLeaseExpiries: 3,
  /** Wait before the first retry of a failed job; doubles per attempt, at most an hour. */
  retryDelayMs: 1000,
  /** Delete finished jobs (false) or keep them as `done`. */
  keepDone: false,
  /** Stop by itself once nothing due is left. */
  once: false,
  /**
   * Claim turns that may run at once against one queue, from every worker on every machine (the
   * rows of `jobq_lanes`; `setup-tables --lanes`). See src/worker/turn-gate.ts for why a limit.
   */
  lanes: 3,
  /** Another lane's job is taken over by a claim whose own lane is empty once it waited this long. */
  stealAfterMs: 50,
} as const;

/**
 * A lease's length in seconds: at least one (leases are renewed every third of it, and a shorter
 * one runs out between two turns of a busy loop), at most a day.
 */
export const LEASE_SECONDS_RANGE = { min: 1, max: 86_400 } as const;

/** A lease's length, or a one-line error: the same rule for queue.work, jobq work, claim() and extendLease(). */
export function checkLeaseSeconds(value: unknown, name = 'leaseSeconds'): number {
  if (typeof value !== 'number' || !(value >= LEASE_SECONDS_RANGE.min && value <= LEASE_SECONDS_RANGE.max)) {
    throw new JobqError(`${name} must be a number of seconds from ${LEASE_SECONDS_RANGE.min} to ${LEASE_SECONDS_RANGE.max}, not ${JSON.stringify(value)}`, ExitCode.usage);
  }
  return value;
}

/** A job's priority when none is given (the column's DEFAULT); smaller runs first. */
export const DEFAULT_PRIORITY = 0;

/** The article's batches of up to 100, which `start-processing` keeps. */
export const ARTICLE_BATCH_SIZE = 100;

/** The most jobs one claim may take: each holds a row lock and a lock-heap entry until COMMIT. */
export const MAX_BATCH_SIZE = 1000;

/** The most lanes a queue may have. */
export const MAX_LANES = 64;
