import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { JobQueue, type Job, type Worker } from '../src/index.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';
import { runCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

// Jobs that come due later start when they do, not at the worker's next poll: the queue that
// enqueued a delayed job, and the worker that put a job back for a retry or a snooze, wake the
// workers then; an idle worker reads when the next one comes due and wakes itself then. These
// workers poll an empty queue 2, 4, 8 ... ms apart, up to a minute, counted from the last claim
// that found work: polls 4.1 s and 8.2 s after it. A job due 5 s after that claim (or after the
// worker's start) and started within a second of its due time was started by a wake-up, never by
// a poll (one would start it 2.9 s late or more), so the bound holds however loaded the machine.

const POLL_INTERVAL_MS = 60_000;
const DUE_MS = 5000;
const ON_TIME_MS = 1000;

let db: TestDatabase;
let queue: JobQueue;
let worker: Worker;
/** When each run of a job began (performance.now()), by id. */
const runs = new Map<number, number[]>();

const recordRun = (job: Job) => {
  const before = runs.get(job.id) ?? [];
  runs.set(job.id, [...before, performance.now()]);
  return before.length > 0;
};

before(async () => {
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
  worker = queue.work(
    {
      delayed: async (job) => void recordRun(job),
      retried: async (job) => {
        if (!recordRun(job)) throw new Error('first attempt fails');
      },
      snoozed: async (job) => {
        if (!recordRun(job)) job.snooze(DUE_MS / 1000);
      },
    },
    { pollIntervalMs: POLL_INTERVAL_MS, retryDelayMs: DUE_MS },
  );
});
after(async () => {
  await worker.stop();
  await queue.close();
  await db.drop();
});

/** The job's runs once it ran `count` times; a timeout says where the job stood and what the worker running it counted. */
const runsOf = async (id: number, count: number, by: Worker = worker) => {
  try {
    await waitUntil(() => (runs.get(id)?.length ?? 0) >= count, `job ${id} ran ${count} times`, { timeoutMs: 20_000 });
  } catch (error) {
    const [row] = await db.rows('SELECT status, attempts, owner_id, TIMESTAMPDIFF(MICROSECOND, NOW(6), run_after) / 1000 AS due_in_ms FROM jobs WHERE id = ?', [id]);
    throw new Error(`${(error as Error).message}; the job: ${JSON.stringify(row ?? 'gone')}; the worker: ${JSON.stringify(by.counters)}`);
  }
  return runs.get(id)!;
};

const assertOnTime = (ms: number, what: string) => assert.ok(ms >= DUE_MS && ms < DUE_MS + ON_TIME_MS, `${what} after ${ms.toFixed(1)} ms, due after ${DUE_MS}`);

test('a job delayed by 5 s starts within a second of its due time', async () => {
  const since = performance.now();
  const id = await queue.enqueue({ kind: 'delayed', delaySeconds: DUE_MS / 1000 });
  const [start] = await runsOf(id, 1);
  assertOnTime(start! - since, 'it started');
});

test('a failed job retried after 5 s and a job snoozed for 5 s run again within a second of their due time', async () => {
  for (const kind of ['retried', 'snoozed']) {
    const id = await queue.enqueue({ kind });
    const [first, second] = await runsOf(id, 2);
    // The job is put back within 25 ms of its run's end (the loop's settle), due 5 s after that.
    assertOnTime(second! - first!, `${kind}: it ran again`);
  }
});

test('a job delayed by a process that has exited starts within a second of its due time: the idle worker read when it comes due', async () => {
  // Enqueued before this worker starts: its first claim finds nothing due and reads when this job
  // comes due, 5.5 s on, between its polls 4.1 s and 8.2 s after its start.
  const queued = await runCli(['enqueue', '--kind', 'elsewhere', '--delay', '5.5', '--database-url', db.url]);
  assert.equal(queued.code, 0, queued.stderr);
  const id = Number(/\(id (\d+)\)/.exec(queued.stdout)?.[1]);
  const elsewhere = queue.work({ elsewhere: async (job) => void recordRun(job) }, { pollIntervalMs: POLL_INTERVAL_MS });
  try {
    const [row] = await db.rows<{ due_ms: string }>('SELECT UNIX_TIMESTAMP(run_after) * 1000 AS due_ms FROM jobs WHERE id = ?', [id]);
    const [start] = await runsOf(id, 1, elsewhere);
    // Both clocks are this machine's: the server's NOW(6) and the worker's.
    const late = performance.timeOrigin + start! - Number(row!.due_ms);
    assert.ok(late > -5 && late < ON_TIME_MS, `it started ${late.toFixed(1)} ms after its due time`);
  } finally {
    await elsewhere.stop();
  }
});
