import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { JobQueue, type Worker } from '../src/index.js';
import { createTestDatabase, serverConnectionOptions, type TestDatabase } from './helpers/test-database.js';
import { waitUntil } from './helpers/wait.js';

// An enqueue wakes the idle workers of its own process once its jobs are committed: the worker
// polls an empty queue only every 5 s here, so a job started within 50 ms of its enqueue was
// started by the wake-up, not by a poll.

const POLL_INTERVAL_MS = 5000;
const WOKEN_WITHIN_MS = 50;

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
 * Lets the worker's idle polls back off: from 2 ms, doubling, they are 1 s apart or more after
 * 2 s, and a poll lands within 50 ms of an enqueue about once in 20 tries. Not a wait for an
 * outcome: the state the enqueue must find.
 */
const idleForTwoSeconds = () => sleep(2100);

/** How long after `since` the job's handler started; waits for it up to 10 s (the poll would come within 5). */
async function startedAfter(id: number, since: number): Promise<number> {
  await waitUntil(() => started.has(id), `job ${id} started`, { timeoutMs: 10_000 });
  return started.get(id)! - since;
}

test('three jobs enqueued one at a time into an idle worker of the same process, polling every 5 s: each starts within 50 ms', async () => {
  for (const enqueue of [() => producer.enqueue({ kind: 'ping' }), async () => (await producer.enqueueMany([{ kind: 'ping' }, { kind: 'ping', delaySeconds: 60 }])).firstId!, () => queue.enqueue({ kind: 'ping' })]) {
    await idleForTwoSeconds();
    const since = performance.now();
    const id = await enqueue();
    const ms = await startedAfter(id, since);
    assert.ok(ms < WOKEN_WITHIN_MS, `job ${id} started ${ms.toFixed(1)} ms after its enqueue began`);
  }
});

test("an enqueue in the caller's transaction wakes no worker before the commit; queue.wakeWorkers() after it does", async () => {
  await idleForTwoSeconds();
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

test('pollIntervalMs out of range is refused with one line, before the worker starts', () => {
  assert.throws(() => queue.work(async () => undefined, { pollIntervalMs: 0 }), (error: Error) => {
    assert.equal(error.message, 'pollIntervalMs must be a whole number from 1 to 60000, not 0');
    return true;
  });
});
