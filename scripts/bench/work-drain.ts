/**
 * One `queue.work` process for the bench: a handler that does nothing, concurrency 10, until
 * nothing is due; prints its counters as JSON. The URL comes from $JOBQ_DATABASE_URL.
 * `--keep-done` keeps the jobs as done instead of deleting them. With $BENCH_REPLICA_URL, the
 * claims read their candidates on that replica.
 */
import { JobQueue } from '../../src/index.js';

const replicaUrl = process.env.BENCH_REPLICA_URL;
const queue = await JobQueue.open(replicaUrl === undefined ? {} : { replicaUrl });
const worker = queue.work(async () => undefined, { concurrency: 10, once: true, keepDone: process.argv.includes('--keep-done') });
await worker.finished;
await queue.close();
console.log(JSON.stringify(worker.counters));
