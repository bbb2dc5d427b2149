import type { Lane } from './sql/claim.js';

export type { Lane } from './sql/claim.js';

/** A job handed out by a claim. */
export interface ClaimedJob {
  id: number;
  kind: string | null;
  payload: unknown;
  /**
   * This run's number among the job's runs: 1 at first, 1 more after each failure of its handler.
   * Runs handed back unstarted, and runs whose lease ran out, do not count.
   */
  attempts: number;
  /**
   * How many times in a row a lease of this job ran out without its worker settling it. Above 0,
   * the job may have crashed its worker: it is claimed alone, and `queue.work` runs it alone.
   */
  leaseExpiries: number;
  /** Smaller runs first. */
  priority: number;
  /** How many times its handler put it off (`job.snooze`); not attempts. */
  snoozes: number;
  /** The job's own timeout (`timeoutMs` at its enqueue), or null: the worker's holds. */
  timeoutMs: number | null;
  /** The job's group, or null: see `group` in the enqueue options. */
  group: string | null;
  /** The job was marked for cancelling (`cancel`) while a run of it was under way: it is cancelled, not run. */
  cancelRequested: boolean;
  /**
   * The OpenTelemetry trace context its enqueue stored (the propagation carrier, W3C
   * `traceparent` and `tracestate` by default), or null: see "Tracing" in docs/library.md.
   */
  traceContext: Readonly<Record<string, string>> | null;
}

export interface ClaimOptions {
  /** Most jobs to take (1 to 1,000). */
  batchSize: number;
  /** Only jobs of these kinds. */
  kinds?: readonly string[];
  /** Seconds the jobs stay ours; after that another consumer may claim them again. */
  leaseSeconds?: number;
  /** A number from 1 up to record as `owner_id` (the consumer's number in the article); 0, the default, is nobody. */
  ownerId?: number;
  /**
   * Claims that run at the same time read disjoint lanes first (`id MOD count = index` on one server), and take
   * other lanes' jobs only once those have waited `stealAfterMs`. Omitted: the whole queue.
   */
  lane?: Lane;
  /** See `lane`; default 50. */
  stealAfterMs?: number;
}

/** The result of one claim attempt. */
export interface Claim {
  /** Unique to this claim: only the holder of this token can complete or release its jobs. */
  readonly token: Buffer;
  /**
   * The jobs now held, in the order the claim chose them: expired leases first, then by priority
   * and age, and round-robin between the groups of a kind; empty when nothing could be claimed.
   */
  readonly jobs: readonly ClaimedJob[];
  /** How many candidate ids the first step found (the claim is "empty" when this is > 0 and jobs is empty). */
  readonly candidates: number;
  /** Ids moved to `failed` by this claim because their lease had run out too often (DEFAULTS.maxLeaseExpiries). */
  readonly failedIds: readonly number[];
}

/** What completing or releasing a claim did. */
export interface Settlement {
  /** Jobs still ours that were deleted, marked done or released. */
  settled: number;
  /** Jobs we no longer owned (the lease ran out and another consumer claimed them): left alone. */
  lost: number;
  /** The claims (by token) a lease renewal of the turn did not renew every job of: one of them is no longer ours. */
  unrenewed?: readonly Buffer[];
}

/** A claim that holds nothing: what a turn that failed, or only settled, hands on. */
export const EMPTY_CLAIM: Claim = Object.freeze({ token: Buffer.alloc(16), jobs: [], candidates: 0, failedIds: [] });
