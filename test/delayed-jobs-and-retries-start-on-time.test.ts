import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { JobQueue, type Worker } from '../src/index.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';
import { runCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

// Jobs that come due later start when they do, not at the worker's next poll: the queue that
// enqueued a delayed job, and the worker that put a job back for a retry or a snooze, wake the
// workers then; an idle worker reads when the next one comes due and wakes itself then. The
// worker here polls an empty queue at most every 5 s, a second or more apart by the time these
// jobs come due (1.5 s on): a start within 300 ms of the due time comes from the wake-up; a poll
// lands in that window at most once in three, all three at most once in 27.

const POLL_INTERVAL_MS = 5000;
const DUE_MS = 1500;
const ON_TIME_MS = 300;

let db: TestDatabase;
let queue: JobQueue;
let worker: Worker;
/** When each run of a job began (performance.now()), by id. */
const runs = new Map<number, number[]>();

before(async () => {
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
  worker = queue.work(
    async (job) => {
      const before = runs.get(job.id) ?? [];
      runs.set(job.id, [...before, performance.now()]);
      if (before.length > 0) return;
      if (job.kind === 'retried') throw new Error('first attempt fails');
      if (job.kind === 'snoozed') job.snooze(DUE_MS / 1000);
    },
    { pollIntervalMs: POLL_INTERVAL_MS, retryDelayMs: DUE_MS },
  );
});
after(async () => {
  await worker.stop();
  await queue.close();
  await db.drop();
});

const runsOf = async (id: number, count: number) => {
  await waitUntil(() => (runs.get(id)?.length ?? 0) >= count, `job ${id} ran ${count} times`, { timeoutMs: 15_000 });
  return runs.get(id)!;
};

const assertOnTime = (ms: number, what: string) => assert.ok(ms >= DUE_MS && ms < DUE_MS + ON_TIME_MS, `${what} after ${ms.toFixed(1)} ms, due after ${DUE_MS}`);

test('a job delayed by 1.5 s starts within 300 ms of its due time', async () => {
  await sleep(2100); // the worker's polls back off to a second apart
  const id = await queue.enqueue({ kind: 'delayed', delaySeconds: DUE_MS / 1000 });
  const since = performance.now();
  const [start] = await runsOf(id, 1);
  assertOnTime(start! - since, 'it started');
});

test('a failed job retried after 1.5 s and a job snoozed for 1.5 s run again within 300 ms of their due time', async () => {
  await sleep(2100);
  for (const kind of ['retried', 'snoozed']) {
    const id = await queue.enqueue({ kind });
    const [first, second] = await runsOf(id, 2);
    // The job is put back within 25 ms of its run's end (the loop's settle), due 1.5 s after that.
    assertOnTime(second! - first!, `${kind}: it ran again`);
  }
});

test('a job delayed by a process that has exited starts within 300 ms of its due time: the idle worker read when it comes due', async () => {
  await sleep(2100);
  // 6 s ahead: the worker polls within 5 s of the enqueue, and reads then when the job comes due.
  const queued = await runCli(['enqueue', '--kind', 'elsewhere', '--delay', '6', '--database-url', db.url]);
  assert.equal(queued.code, 0, queued.stderr);
  const id = Number(/\(id (\d+)\)/.exec(queued.stdout)?.[1]);
  const [row] = await db.rows<{ due_ms: string }>('SELECT UNIX_TIMESTAMP(run_after) * 1000 AS due_ms FROM jobs WHERE id = ?', [id]);
  const [start] = await runsOf(id, 1);
  // Both clocks are this machine's: the server's NOW(6) and the worker's.
  const late = performance.timeOrigin + start! - Number(row!.due_ms);
  assert.ok(late > -5 && late < ON_TIME_MS, `it started ${late.toFixed(1)} ms after its due time`);
});
