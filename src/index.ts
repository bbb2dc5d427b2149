/**
 * jobq's library API: a job queue in a MySQL/MariaDB table. The `jobq` command is built on it.
 *
 * @example
 * const queue = await JobQueue.open('mysql://root@127.0.0.1:3306/jobq');
 * await queue.setup();
 * await queue.enqueueMany([{ d: 'hello', e: 'world' }]);
 * const claim = await queue.claim({ batchSize: 100 });
 * await queue.complete(claim);
 * await queue.close();
 */
export { JobQueue, DEFAULT_TABLE } from './queue/job-queue.js';
export type { JobQueueOptions, SetupOptions, SetupResult } from './queue/job-queue.js';
export type { Claim, ClaimOptions, ClaimedJob, JobStatus, NewJob, Pick, QueueStats, Settlement } from './queue/types.js';
export { JOB_STATUSES, MAX_BATCH_SIZE, PICKS } from './queue/types.js';
export { CURRENT_SCHEMA_VERSION } from './queue/sql/schema.js';
export { ExitCode, JobqError } from './errors.js';
export type { ConnectionEvent } from './db/database.js';
export type { ServerVersion } from './db/server-version.js';
