/**
 * jobq's library API: a job queue in a MySQL/MariaDB table. The `jobq` command is built on it.
 * See examples/readme-example.mjs and the README's "Library" section.
 */
export { JobQueue, DEFAULT_TABLE } from './queue/job-queue.js';
export type { FailOptions, JobQueueOptions, SettleOptions, SetupOptions, SetupResult } from './queue/job-queue.js';
export type {
  Claim,
  ClaimOptions,
  ClaimedJob,
  EnqueueResult,
  JobStatus,
  NewJob,
  Pick,
  QueueStats,
  ServerInfo,
  Settlement,
} from './queue/types.js';
export { JOB_STATUSES, MAX_BATCH_SIZE, MAX_PAYLOAD_BYTES, PICKS } from './queue/types.js';
export { CURRENT_SCHEMA_VERSION } from './queue/sql/schema.js';
export { ExitCode, JobqError } from './errors.js';
export type { ConnectionEvent } from './db/database.js';
export type { ServerVersion } from './db/server-version.js';
