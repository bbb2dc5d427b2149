/** Where a job is in its life: see "Job states" in the README. */
export type JobStatus = 'unclaimed' | 'claimed' | 'done' | 'failed';
export const JOB_STATUSES: readonly JobStatus[] = ['unclaimed', 'claimed', 'done', 'failed'];

/** How a consumer chooses candidates: the article's random first letter of `d`, or oldest first. */
export type Pick = 'random-prefix' | 'oldest';
export const PICKS: readonly Pick[] = ['random-prefix', 'oldest'];

/** The most jobs one claim may take: each holds a row lock and a lock-heap entry until COMMIT. */
export const MAX_BATCH_SIZE = 1000;

/** The largest payload a job may carry, as UTF-8 JSON text. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

/** A job to insert. */
export interface NewJob {
  /** What sort of job this is (at most 64 characters); `work --kind` claims one kind only. */
  kind?: string;
  /** Anything JSON can hold, at most {@link MAX_PAYLOAD_BYTES} as JSON text. */
  payload?: unknown;
  /** Not handed out before this time (the server's clock decides, by the delay from now). */
  runAfter?: Date;
  /** Not handed out before this many seconds from now. */
  delaySeconds?: number;
  /** Unique key (1-64 ASCII characters): a job whose key exists already is not inserted again. Made up when absent. */
  key?: string;
  /** The article's demo fields (64 letters each in the demo); empty when not given. */
  d?: string;
  e?: string;
}

/** What {@link JobQueue.enqueueMany} did. */
export interface EnqueueResult {
  /** Jobs sent (a job whose key existed already counts, but is not there twice). */
  count: number;
  /** Lowest and highest id among them; null for an empty list. */
  firstId: number | null;
  lastId: number | null;
}

/** A job handed to a consumer by a claim. */
export interface ClaimedJob {
  id: number;
  kind: string | null;
  payload: unknown;
  /** How many claims this job has seen, this one included. */
  attempts: number;
  d: string;
  e: string;
}

export interface ClaimOptions {
  /** Most jobs to take (1 to {@link MAX_BATCH_SIZE}). */
  batchSize: number;
  /** Only jobs of this kind (then `pick` is always oldest first). */
  kind?: string;
  /** How candidates are chosen when no `kind` is given; default `oldest`. */
  pick?: Pick;
  /** Seconds the jobs stay ours; after that another consumer may claim them again. */
  leaseSeconds?: number;
  /** A number from 1 up to record as `owner_id` (the consumer's number in the article); 0, the default, is nobody. */
  ownerId?: number;
  /** A job claimed this often already goes to `failed` instead of being claimed again. */
  maxAttempts?: number;
  /**
   * Consumers that share a queue claim from disjoint lanes first (`id MOD count = index`), and
   * take other lanes' jobs only once those have waited `stealAfterMs` (default 50). Give each of
   * N consumers its own index 0..N-1 and count N; omitted: one lane, no spreading.
   */
  lane?: { index: number; count: number; stealAfterMs?: number };
}

/** The result of one claim attempt. */
export interface Claim {
  /** Unique to this claim: only the holder of this token can complete or release its jobs. */
  readonly token: Buffer;
  /** The jobs now held, ids ascending; empty when nothing could be claimed. */
  readonly jobs: readonly ClaimedJob[];
  /** How many candidate ids the first step found (the claim is "empty" when this is > 0 and jobs is empty). */
  readonly candidates: number;
  /** Ids moved to `failed` by this claim because their attempts were used up. */
  readonly failedIds: readonly number[];
}

/** What completing or releasing a claim did. */
export interface Settlement {
  /** Jobs still ours that were deleted, marked done or released. */
  settled: number;
  /** Jobs we no longer owned (the lease ran out and another consumer claimed them): left alone. */
  lost: number;
}

export interface QueueStats {
  table: string;
  counts: Record<JobStatus, number>;
  total: number;
  /** Counts per kind (null: jobs without a kind), kinds in alphabetical order. */
  byKind: Array<{ kind: string | null; counts: Record<JobStatus, number> }>;
  /** Seconds since the job at the head of the queue was inserted; null when nothing waits. */
  headAgeSeconds: number | null;
  /** Claimed jobs per owner (null: claimed without an `ownerId`). */
  claimedByOwner: Array<{ ownerId: number | null; count: number; expired: number }>;
  /** The highest id given out so far (for throughput between two readings); 0 for an empty table. */
  maxId: number;
}

/** The server, as `stats` shows it. */
export interface ServerInfo {
  version: string;
  /** The server's default isolation level (jobq's own sessions use READ COMMITTED). */
  isolationLevel: string;
  binlogFormat: string;
  binlogEnabled: boolean;
}
