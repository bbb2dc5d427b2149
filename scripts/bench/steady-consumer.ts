/**
 * The steady scenario's consumer: `queue.work` at concurrency 10 for SECONDS, each handler noting
 * how long its job waited from `enqueue()` (the payload's `sentAt`) to the handler's start; then
 * stops and prints the count and percentiles as JSON. Usage: steady-consumer.js SECONDS. With
 * $BENCH_REPLICA_URL, the claims read their candidates on that replica.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { JobQueue } from '../../src/index.js';

const seconds = Number(process.argv[2] ?? 30);
const replicaUrl = process.env.BENCH_REPLICA_URL;
const queue = await JobQueue.open(replicaUrl === undefined ? {} : { replicaUrl });
const waited: number[] = [];
const worker = queue.work(async (job) => void waited.push(Date.now() - (job.payload as { sentAt: number }).sentAt), { concurrency: 10 });
await sleep(seconds * 1000);
await worker.stop();
await queue.close();
waited.sort((a, b) => a - b);
const percentile = (p: number) => waited[Math.min(waited.length - 1, Math.floor(p * waited.length))] ?? null;
console.log(JSON.stringify({ handled: waited.length, p50: percentile(0.5), p95: percentile(0.95), p99: percentile(0.99) }));
