import type { GaleraNode } from '../db/galera.js';
import type { Rate } from '../config/rate.js';
import type { TableLayout } from './table-layout.js';
import type { JobSnoozed } from '../errors.js';

export type { Claim, ClaimedJob, ClaimOptions, Lane, Settlement } from '../claim/types.js';

/** Where a job is in its life: see "Job states" in docs/design.md. */
export type JobStatus = 'unclaimed' | 'claimed' | 'done' | 'failed' | 'cancelled' | 'scheduled';
/** In the order of the status column's ENUM (schema 21, 22): new statuses go last. */
export const JOB_STATUSES: readonly JobStatus[] = ['unclaimed', 'claimed', 'done', 'failed', 'cancelled', 'scheduled'];

/** The largest payload a job may carry, as UTF-8 JSON text. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

/**
 * Job kinds and their payload types, for a typed queue: `JobQueue.open<Tasks>()` with
 * `type Tasks = { email: { to: string }; report: { day: string } }`. Without one, any kind
 * (or none) with any payload.
 */
export type TaskMap = Record<string, unknown>;

/** The task map of a queue opened without one: every kind, every payload. */
export type AnyTasks = { [kind: string]: unknown };

/** True for the untyped default task map. */
type IsUntyped<Tasks> = string extends keyof Tasks ? true : false;

/** When and how a job is queued, whatever its kind. */
export interface EnqueueTiming {
  /** Not handed out before this time (the server's clock decides, by the delay from now). */
  runAfter?: Date;
  /** Not handed out before this many seconds from now. */
  delaySeconds?: number;
  /** Among due jobs, smaller runs first (a whole number from -32768 to 32767; default 0). */
  priority?: number;
  /**
   * The job's group (1-64 characters: a tenant, an account, a customer id); only for a job with a
   * kind. Claims share a kind round-robin between its groups, and a limit may hold per group
   * (`setLimit(kind, { groupConcurrency })`). Without one, the job is in no group.
   */
  group?: string;
  /**
   * Unique key (1-64 ASCII characters): a job whose key exists already is not inserted again.
   * Made up when absent, ordered by time (see new-jobs.ts).
   */
  key?: string;
  /**
   * How long a run of this job may take, in milliseconds (1 to 2147483647), over the worker's
   * `timeoutMs`: then its `signal` fires and the run fails (see "Timeouts" in docs/library.md).
   */
  timeoutMs?: number;
  /** At most one job of this unique key at a time, or one waiting whose payload each enqueue replaces: see {@link UniqueOptions}. */
  unique?: UniqueOptions;
}

/**
 * A unique job: while its key holds, an enqueue of the same key adds no job and returns the id of
 * the job holding it. Held by a unique index, so concurrent enqueues on any number of connections
 * queue one job.
 */
export interface UniqueOptions {
  /** 1-64 printable ASCII characters without spaces; keys of every kind share one space. */
  key: string;
  /**
   * While the key holds: `'waiting'`, until a worker first takes the job (due or delayed);
   * `'active'` (the default), until the job is done or failed; `'stored'`, while its row exists
   * (done and failed jobs kept included).
   */
  while?: 'waiting' | 'active' | 'stored';
  /**
   * `'keep'` (the default): the job holding the key stays as it is. `'replace'` (debounce): the
   * job waiting with the key takes the new payload, and its run time moves to the new delay; a job
   * already taken by a worker is left to run, and a new one is queued. Holds while the job waits.
   */
  onConflict?: 'keep' | 'replace';
  /**
   * Instead of `while`: the key holds for this many seconds from the enqueue of the job that took
   * it, whatever becomes of the job ("one per key per hour": 3600).
   */
  windowSeconds?: number;
}

/** A job to insert into an untyped queue. */
export interface UntypedNewJob extends EnqueueTiming {
  /** What sort of job this is (at most 64 characters); handler maps and `work --kind` claim by kind. */
  kind?: string;
  /** Anything JSON can hold, at most {@link MAX_PAYLOAD_BYTES} as JSON text. */
  payload?: unknown;
}

/** A job to insert: in a typed queue, a known kind with its payload type. */
export type NewJob<Tasks extends TaskMap = AnyTasks> =
  IsUntyped<Tasks> extends true
    ? UntypedNewJob
    : { [Kind in keyof Tasks & string]: EnqueueTiming & { kind: Kind; payload: Tasks[Kind] } }[keyof Tasks & string];

/** What a schedule enqueues at each tick: in a typed queue, a known kind with its payload type. */
export type ScheduledJobOf<Tasks extends TaskMap = AnyTasks> =
  IsUntyped<Tasks> extends true
    ? { kind: string; payload?: unknown; priority?: number }
    : { [Kind in keyof Tasks & string]: { kind: Kind; payload: Tasks[Kind]; priority?: number } }[keyof Tasks & string];

/** What {@link JobQueue.enqueueMany} did. */
export interface EnqueueResult {
  /** Jobs sent (a job whose key existed already counts, but is not there twice). */
  count: number;
  /** Lowest and highest id among them; null for an empty list. */
  firstId: number | null;
  lastId: number | null;
}


/** A job as a handler of `queue.work` gets it. */
export interface Job<Kind extends string | null = string | null, Payload = unknown> {
  id: number;
  kind: Kind;
  payload: Payload;
  /** This run's number: 1 at first, 1 more after each failure of its handler (see {@link ClaimedJob.attempts}). */
  attempts: number;
  /** The job's group, or null (see {@link EnqueueTiming.group}). */
  group: string | null;
  /**
   * Fires when the job is cancelled (`cancel`, with a JobCancelled), the worker is stopped hard
   * (`stop({ timeoutMs })` ran out), or the run's timeout passed: give up and throw.
   */
  signal: AbortSignal;
  /**
   * Puts the job off: when the handler ends (returns, or throws this error or any other), the job
   * goes back to the queue, due in `seconds`, with this run's attempt given back. After the
   * worker's `maxSnoozes` (default 100) snoozes of the job, it goes to `failed` instead.
   */
  snooze(seconds: number): JobSnoozed;
  /**
   * Reports how far the run has come: a number or a small JSON object (at most 4 KiB), kept with
   * the job for `queue.job`, `jobq job` and the dashboard. Written at most 4 times a second
   * whatever the handler calls; the latest report before the job ends is always written.
   */
  progress(value: number | Record<string, unknown>): void;
}

/** The jobs a handler of a queue may get: in a typed queue, one of its kinds with that kind's payload. */
export type JobOf<Tasks extends TaskMap> =
  IsUntyped<Tasks> extends true ? Job : { [Kind in keyof Tasks & string]: Job<Kind, Tasks[Kind]> }[keyof Tasks & string];

/** Runs one job: returning completes it, throwing fails it (retried later, or `failed`). */
export type JobHandler<J> = (job: J) => unknown;

/** One handler per kind; the worker claims only these kinds. */
export type HandlerMap<Tasks extends TaskMap> =
  IsUntyped<Tasks> extends true
    ? { [kind: string]: JobHandler<Job<string, unknown>> }
    : { [Kind in keyof Tasks & string]?: JobHandler<Job<Kind, Tasks[Kind]>> };

export interface QueueStats {
  table: string;
  counts: Record<JobStatus, number>;
  total: number;
  /**
   * Counts per kind (null: jobs without a kind), kinds in alphabetical order, paused kinds and
   * kinds with schedules included even without jobs. `nextScheduledAt`: the next tick of the
   * kind's schedules. Kinds that only have totals (every job of theirs deleted) are included too.
   */
  byKind: Array<{
    kind: string | null;
    counts: Record<JobStatus, number>;
    paused: boolean;
    /**
     * The kind's limits (`setLimit`, null: no such limit), running now, and the due jobs the kind's
     * concurrency holds back now (waiting beyond the room it leaves); null without any limit.
     */
    limit: (Omit<KindLimitStatus, 'kind'> & { heldBack: number }) | null;
    nextScheduledAt: Date | null;
    /** Jobs completed, failed for good and retried since the queue was made, deleted ones included. */
    totals: { completed: number; failed: number; retried: number };
  }>;
  /** The limit on every kind together (`setLimit('*', ...)`), as `byKind`'s are; null without one. */
  everyKindLimit: (Omit<KindLimitStatus, 'kind'> & { heldBack: number }) | null;
  /** Seconds the longest-waiting due job has waited since it came due; null when nothing waits. */
  headAgeSeconds: number | null;
  /** Claimed jobs per owner (null: claimed without an `ownerId`), and the shortest lease they have left (negative: ran out). */
  claimedByOwner: Array<{ ownerId: number | null; count: number; expired: number; leaseLeftSeconds: number }>;
  /** The highest id given out so far (for throughput between two readings); 0 for an empty table. */
  maxId: number;
  /** Kinds no worker claims now (`pause`), in alphabetical order. */
  pausedKinds: string[];
  /** Schedules the workers skip because their cron or time zone cannot be read, and why. */
  skippedSchedules: Array<{ name: string; reason: string }>;
  /** Claims made by every worker since the queue was made, and those that found candidates but locked none. */
  claims: { total: number; empty: number };
  /** How the table is partitioned (`setup-tables --partitions`): 0 partitions when it is not. */
  layout: TableLayout;
}

/** The queue's running totals, every kind together, and the highest id handed out: what {@link JobQueue.totals} reads. */
export interface QueueTotals {
  /** Jobs completed, failed for good and retried since the queue was made, deleted ones included. */
  completed: number;
  failed: number;
  retried: number;
  /** The highest id given out so far; 0 for an empty table. */
  maxId: number;
}

/** A failed job, as {@link JobQueue.failedJobs} lists it. */
export interface FailedJob {
  id: number;
  kind: string | null;
  attempts: number;
  lastError: string | null;
  /** The payload's JSON text, its first 200 characters. */
  payloadPreview: string | null;
  failedAt: Date;
}

/** The server, as `stats` shows it. */
export interface ServerInfo {
  version: string;
  /** The server's default isolation level (jobq's own sessions use READ COMMITTED). */
  isolationLevel: string;
  binlogFormat: string;
  binlogEnabled: boolean;
  /** The server is a Galera node: its state and its cluster's (absent on other servers). */
  galera?: GaleraNode;
}

/**
 * Limits on the jobs of a kind, held by every worker of the queue on every machine. A job runs
 * from its claim until it is settled or its lease runs out.
 */
export interface KindLimit {
  /** Most jobs of the kind running at once, counted across every worker. */
  concurrency?: number;
  /** Most jobs of each group of the kind running at once (see `group` in the enqueue options). */
  groupConcurrency?: number;
  /** Most jobs of the kind claimed in any window of `perSeconds`. */
  rate?: Rate;
  /** Most jobs of each group of the kind claimed in any window of `perSeconds`. */
  groupRate?: Rate;
}

/** A kind's limits as they stand (null: none of that sort), with the jobs of the kind running now. */
export interface KindLimitStatus {
  kind: string;
  concurrency: number | null;
  groupConcurrency: number | null;
  rate: Rate | null;
  groupRate: Rate | null;
  running: number;
}
