/**
 * One producer for the bench: `enqueue()` one job at a time from one connection, or the plain
 * single-row autocommit INSERT it is compared with. Prints jobs per second.
 * Modes: jobq, jobq-uuid (a random key each), plain; and a key or a unique key of each job's own,
 * one job at a time or `enqueueMany` of 1,000: key, unique, key-batch, unique-batch; paced, RATE
 * jobs a second and no more (the latency scenario).
 * Usage: enqueue-loop.js MODE SECONDS [RATE] (URL from $JOBQ_DATABASE_URL).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { JobQueue } from '../../src/index.js';
import { pacedEnqueues, wallClockMs } from './paced-producer.js';

const [mode = 'jobq', seconds = '10', rate = '1000'] = process.argv.slice(2);
const until = performance.now() + Number(seconds) * 1000;
let count = 0;
if (mode === 'plain') {
  const connection = await mysql.createConnection(process.env.JOBQ_DATABASE_URL!);
  const payload = JSON.stringify({ sentAt: 0 });
  while (performance.now() < until) {
    await connection.query("INSERT INTO plain_jobs (d, e, status, payload) VALUES ('', '', 'unclaimed', ?)", [payload]);
    count++;
  }
  await connection.end();
} else if (['key', 'unique', 'key-batch', 'unique-batch'].includes(mode)) {
  const queue = await JobQueue.open();
  const batch = mode.endsWith('-batch') ? 1000 : 1;
  const job = (n: number) => ({ kind: 'bench', payload: { n }, ...(mode.startsWith('unique') ? { unique: { key: `${process.pid}-${n}` } } : { key: `${process.pid}-${n}` }) });
  while (performance.now() < until) {
    if (batch === 1) await queue.enqueue(job(count));
    else await queue.enqueueMany(Array.from({ length: batch }, (_, i) => job(count + i)));
    count += batch;
  }
  await queue.close();
} else if (mode === 'paced') {
  const queue = await JobQueue.open();
  // The consumer started with this process is up a second later: no backlog of its start-up.
  await sleep(1000);
  count = await pacedEnqueues(queue, Number(seconds), Number(rate));
  await queue.close();
} else {
  const queue = await JobQueue.open();
  while (performance.now() < until) {
    // The payload carries the send time, for the steady scenario's enqueue-to-start latency.
    await queue.enqueue({ kind: 'bench', payload: { sentAt: wallClockMs() }, ...(mode === 'jobq-uuid' && { key: randomUUID() }) });
    count++;
  }
  await queue.close();
}
console.log(JSON.stringify({ jobsPerSecond: Math.round(count / Number(seconds)), count }));
