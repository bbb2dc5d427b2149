/**
 * jobq's library API: a job queue in a MySQL/MariaDB table. The `jobq` command is built on it.
 * See examples/readme-example.mjs and docs/library.md.
 */
export { JobQueue } from './job-queue.js';
export type { JobQueueOptions } from './job-queue.js';
export type { FailOptions, SettleOptions } from './claim/direct-claims.js';
export type { SetupOptions, SetupProgress, SetupResult } from './queue/setup.js';
export type { CancelResult } from './queue/cancel.js';
export type { JobError, JobInfo, WaitOptions } from './queue/job-info.js';
export type { FoundJob, JobSearch } from './queue/job-search.js';
export type { EnqueueOptions } from './queue/enqueue.js';
export type { TransactionHandle } from './queue/caller-transaction.js';
export type { PruneOptions, PruneResult } from './queue/prune.js';
export type { KindLimit, KindLimitStatus } from './queue/types.js';
export type { Rate } from './config/rate.js';
export type { Schedule, ScheduledJob, ScheduleOptions } from './queue/schedules.js';
export { Worker } from './worker/worker.js';
export type { FailureInfo, RunInfo, SnoozeInfo, StopOptions, WorkerCounters } from './worker/worker.js';
export type { WorkerOptions } from './worker/options.js';
export { JobTimeoutError } from './worker/job-timeout.js';
export type {
  AnyTasks,
  Claim,
  ClaimOptions,
  ClaimedJob,
  EnqueueResult,
  EnqueueTiming,
  FailedJob,
  HandlerMap,
  Job,
  JobHandler,
  JobOf,
  JobStatus,
  Lane,
  NewJob,
  QueueStats,
  QueueTotals,
  ScheduledJobOf,
  ServerInfo,
  Settlement,
  TaskMap,
  UniqueOptions,
  UntypedNewJob,
} from './queue/types.js';
export { JOB_STATUSES, MAX_PAYLOAD_BYTES } from './queue/types.js';
export { DEFAULT_TABLE, DEFAULTS, MAX_BATCH_SIZE } from './config/defaults.js';
export { CURRENT_SCHEMA_VERSION } from './queue/sql/schema.js';
export { ExitCode, JobCancelled, JobFailed, JobqError, JobSnoozed } from './errors.js';
export type { ConnectionEvent } from './db/connection-events.js';
export type { ServerVersion } from './db/server-version.js';
