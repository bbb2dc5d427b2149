import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { JobQueue, type Worker } from '../src/index.js';
import { createTestDatabase, serverConnectionOptions, type TestDatabase } from './helpers/test-database.js';
import { waitUntil } from './helpers/wait.js';

// An enqueue wakes the idle workers of its own process once its jobs are committed. The worker
// here polls an empty queue at most every 5 s; idle for 4.2 s, its polls have backed off to 4 s
// apart, the next one due at 8.2 s, about 4 s after the enqueue. A job it starts within 2 s of
// the enqueue's commit was started by the wake-up (a few ms on a quiet machine; 56 ms seen with
// both suites running, 213 ms on MySQL in a whole CI run, 1,134 ms on MariaDB in one with the
// cores busy 96 % of the time, and a timer's wake-up 402 ms late under a CI run's load), never by
// a poll.

const POLL_INTERVAL_MS = 5000;
const WOKEN_WITHIN_MS = 2000;

let db: TestDatabase;
let queue: JobQueue;
let producer: JobQueue;
let app: mysql.Pool;
let worker: Worker;
/** When each job's handler started, by id (performance.now()). */
const started = new Map<number, number>();

before(async () => {
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
  // Another queue object of the same process, on the same table: its enqueues wake the worker too.
  producer = await JobQueue.open(db.url);
  app = mysql.createPool({ ...serverConnectionOptions(), connectionLimit: 1 });
  worker = queue.work(
    async (job) => {
      started.set(job.id, performance.now());
    },
    { pollIntervalMs: POLL_INTERVAL_MS },
  );
  // The worker runs once a first job has run.
  const first = await producer.enqueue({ kind: 'ping' });
  await waitUntil(() => started.has(first), 'the first job ran');
});
after(async () => {
  await worker.stop();
  await app.end();
  await producer.close();
  await queue.close();
  await db.drop();
});

/**
 * Lets the worker's idle polls back off: from 2 ms, doubling, the wait under way after 4.2 s is
 * the one of 4 s. Not a wait for an outcome: the state the enqueue must find.
 */
const idleForFourSeconds = () => sleep(4200);

/** How long after `since` the job's handler started; waits for it up to 10 s (the poll would come within 5). */
async function startedAfter(id: number, since: number): Promise<number> {
  await waitUntil(() => started.has(id), `job ${id} started`, { timeoutMs: 10_000 });
  return started.get(id)! - since;
}

test('three jobs enqueued one at a time into an idle worker of the same process, polling every 5 s: each starts within 2 s', async () => {
  for (const enqueue of [() => producer.enqueue({ kind: 'ping' }), async () => (await producer.enqueueMany([{ kind: 'ping' }, { kind: 'ping', delaySeconds: 60 }])).firstId!, () => queue.enqueue({ kind: 'ping' })]) {
    await idleForFourSeconds();
    // Timed from the enqueue's return, when its jobs are committed and the wake-up sent: the
    // insert's own round trips (205 ms once with both suites running) are not what is tested.
    const id = await enqueue();
    const since = performance.now();
    const ms = await startedAfter(id, since);
    assert.ok(ms < WOKEN_WITHIN_MS, `job ${id} started ${ms.toFixed(1)} ms after its enqueue returned`);
  }
});

test("an enqueue in the caller's transaction wakes no worker before the commit; queue.wakeWorkers() after it does", async () => {
  await idleForFourSeconds();
  const connection = await app.getConnection();
  let id: number;
  try {
    await connection.beginTransaction();
    id = await producer.enqueue({ kind: 'ping' }, { connection });
    assert.equal(started.has(id), false);
    await connection.commit();
  } finally {
    connection.release();
  }
  const since = performance.now();
  producer.wakeWorkers();
  const ms = await startedAfter(id, since);
  assert.ok(ms < WOKEN_WITHIN_MS, `job ${id} started ${ms.toFixed(1)} ms after wakeWorkers()`);
});
