/**
 * Every default of the claim and worker path, in one place: the library, `jobq work`,
 * `start-processing` and their help texts all read them from here (through the option
 * declarations of options.ts).
 */
export const DEFAULTS = {
  /** Handlers one worker runs at once. */
  concurrency: 10,
  /**
   * Jobs one claim takes, and so how many a worker holds ahead of its handlers: 200 takes most of
   * the gain of bigger batches without a worker hoarding slow jobs (batches of 50 to 400 measured
   * in docs/performance.md, "Whole batches, and 200 of them").
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
  /** Times a job may be put off by its handler (`job.snooze`) before it goes to `failed`. */
  maxSnoozes: 100,
  /** Wait before the first retry of a failed job; doubles per attempt, at most an hour. */
  retryDelayMs: 1000,
  /** Delete finished jobs (false) or keep them as `done`. */
  keepDone: false,
  /** Keep done jobs whose handler returned a value, with it (see `keepResults` in the worker options). */
  keepResults: false,
  /** Stop by itself once nothing due is left. */
  once: false,
  /**
   * The longest an idle worker waits before it looks at an empty queue again (it starts at 2 ms
   * and doubles): what a job enqueued by another process may wait before a worker sees it. Jobs
   * enqueued in the worker's own process wake it at once.
   */
  pollIntervalMs: 20,
  /**
   * How long a worker waits after a claim that took only a few jobs (under a quarter of those it
   * had room for), so that jobs arriving one at a time are claimed several per claim instead of a
   * claim (a COMMIT) each, which held up the producers (no wait, 3, 4 and 5 ms measured in
   * docs/performance.md, "The path your own code takes"). 0 starts such jobs sooner, at the
   * server's CPU (docs/library.md, "When a new job starts").
   */
  lightClaimPauseMs: 4,
  /** Worker processes of `jobq work`: 1 runs in the command's own process. */
  processes: 1,
  /** A replica further behind than this is not read: candidates come from the primary. */
  replicaMaxLagSeconds: 1,
  /**
   * Claim turns that may run at once against one queue, from every worker on every machine (the
   * rows of `jobq_lanes`; `setup-tables --lanes`). See src/claim/turn-gate.ts for why a limit.
   */
  lanes: 3,
  /** Another lane's job is taken over by a claim whose own lane is empty once it waited this long. */
  stealAfterMs: 50,
} as const;

/** The jobs table's name when none is given. */
export const DEFAULT_TABLE = 'jobs';

/** Where `jobq dashboard` listens, and `jobq work --metrics-port`: this machine only. */
export const DASHBOARD_DEFAULTS = { port: 9750, host: '127.0.0.1' } as const;

/** A job's priority when none is given (the column's DEFAULT); smaller runs first. */
export const DEFAULT_PRIORITY = 0;

/** The article's program as `start-processing` runs it by default: 2 generators committing every 10 inserts, 10 consumers claiming up to 100 jobs. */
export const ARTICLE = { generators: 2, consumers: 10, batchSize: 100, commitEvery: 10, workMs: 0 } as const;

/** The most jobs one claim may take: each holds a row lock and a lock-heap entry until COMMIT. */
export const MAX_BATCH_SIZE = 1000;

/** The most lanes a queue may have. */
export const MAX_LANES = 64;
