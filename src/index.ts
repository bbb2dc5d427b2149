/**
 * jobq's library API: a job queue in a MySQL/MariaDB table. The `jobq` command is built on it.
 * See examples/readme-example.mjs and the README's "Library" section.
 */
export { JobQueue, DEFAULT_TABLE } from './queue/job-queue.js';
export type { EnqueueOptions, FailOptions, JobQueueOptions, SettleOptions, SetupOptions, SetupResult } from './queue/job-queue.js';
export type { CancelResult } from './queue/cancel.js';
export type { PruneOptions, PruneResult } from './queue/prune.js';
export type { Schedule, ScheduledJob, ScheduleOptions } from './queue/schedules.js';
export { Worker } from './worker/worker.js';
export type { FailureInfo, RunInfo, StopOptions, WorkerCounters } from './worker/worker.js';
export type { WorkerOptions } from './worker/options.js';
export type {
  AnyTasks,
  CandidatePick,
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
  ScheduledJobOf,
  ServerInfo,
  Settlement,
  TaskMap,
  UntypedNewJob,
} from './queue/types.js';
export { CANDIDATE_PICKS, JOB_STATUSES, MAX_PAYLOAD_BYTES } from './queue/types.js';
export { DEFAULTS, MAX_BATCH_SIZE } from './queue/defaults.js';
export { CURRENT_SCHEMA_VERSION } from './queue/sql/schema.js';
export { ExitCode, JobqError } from './errors.js';
export type { ConnectionEvent } from './db/database.js';
export type { ServerVersion } from './db/server-version.js';
