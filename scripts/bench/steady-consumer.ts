/**
 * The steady and latency scenarios' consumer: `queue.work` at concurrency 10 for SECONDS, each
 * handler noting how long its job waited from `enqueue()` (the payload's `sentAt`) to the
 * handler's start; then stops and prints the count and percentiles (ms) as JSON. With a RATE, this
 * process also enqueues that many jobs a second through a queue of its own, for SECONDS less 2.
 * Usage: steady-consumer.js SECONDS [RATE]. With $BENCH_REPLICA_URL, the claims read their
 * candidates on that replica; with $BENCH_WORKER_URL, the worker connects there (a cluster's
 * other node) instead of $JOBQ_DATABASE_URL; with $BENCH_LIGHT_CLAIM_PAUSE_MS, the worker pauses
 * that long after a light claim (lightClaimPauseMs) instead of its default.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { JobQueue } from '../../src/index.js';
import { pacedEnqueues, wallClockMs } from './paced-producer.js';

const seconds = Number(process.argv[2] ?? 30);
const rate = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
const replicaUrl = process.env.BENCH_REPLICA_URL;
const workerUrl = process.env.BENCH_WORKER_URL;
const queue = await JobQueue.open({ ...(workerUrl !== undefined && { url: workerUrl }), ...(replicaUrl !== undefined && { replicaUrl }) });
const waited: number[] = [];
const lightClaimPauseMs = process.env.BENCH_LIGHT_CLAIM_PAUSE_MS;
const worker = queue.work(async (job) => void waited.push(wallClockMs() - (job.payload as { sentAt: number }).sentAt), {
  concurrency: 10,
  ...(lightClaimPauseMs !== undefined && { lightClaimPauseMs: Number(lightClaimPauseMs) }),
});
if (rate === undefined) await sleep(seconds * 1000);
else {
  const producer = await JobQueue.open();
  await Promise.all([sleep(seconds * 1000), sleep(1000).then(() => pacedEnqueues(producer, seconds - 2, rate))]);
  await producer.close();
}
await worker.stop();
await queue.close();
waited.sort((a, b) => a - b);
const percentile = (p: number) => {
  const ms = waited[Math.min(waited.length - 1, Math.floor(p * waited.length))];
  return ms === undefined ? null : Math.round(ms * 10) / 10;
};
console.log(JSON.stringify({ handled: waited.length, p50: percentile(0.5), p95: percentile(0.95), p99: percentile(0.99) }));
