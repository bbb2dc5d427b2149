/**
 * One `queue.work` process for the bench: a handler that does nothing, concurrency 10, until
 * nothing is due; prints its counters as JSON. The URL comes from $JOBQ_DATABASE_URL.
 * `--keep-done` keeps the jobs as done instead of deleting them; `--concurrency N` and
 * `--handler-ms MS` (a handler that takes that long) change the worker; `--seconds S` stops it
 * after S seconds, drained or not. With $BENCH_REPLICA_URL, the claims read their candidates on
 * that replica.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { JobQueue } from '../../src/index.js';

const argument = (name: string) => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : Number(process.argv[at + 1]);
};
const handlerMs = argument('--handler-ms');
const replicaUrl = process.env.BENCH_REPLICA_URL;
const queue = await JobQueue.open(replicaUrl === undefined ? {} : { replicaUrl });
const handler = handlerMs === undefined ? async () => undefined : () => sleep(handlerMs);
const seconds = argument('--seconds');
const worker = queue.work(handler, { concurrency: argument('--concurrency') ?? 10, once: seconds === undefined, keepDone: process.argv.includes('--keep-done') });
if (seconds !== undefined) await Promise.race([worker.finished, sleep(seconds * 1000).then(() => worker.stop())]);
await worker.finished;
await queue.close();
console.log(JSON.stringify(worker.counters));
