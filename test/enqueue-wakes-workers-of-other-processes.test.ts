import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { JobQueue, type Worker } from '../src/index.js';
import { createTestDatabase, SERVER_URL, type TestDatabase } from './helpers/test-database.js';
import { waitUntil } from './helpers/wait.js';

// An enqueue in another process wakes an idle worker: the producer ends the worker's wait
// statement with KILL QUERY once its jobs are committed (src/wake-ups/). The worker here polls an
// empty queue at most every 5 s; idle for 4.2 s, its polls have backed off to 4 s apart, the next
// one due at 8.2 s, 3 s or more after a producer started then has committed. A job it starts
// within a second of the commit was started by the wake-up, never by a poll. The wake-up takes
// 4-10 ms on a quiet machine; under the load of a whole CI run, each of its three hops (producer
// to server, server to worker, the worker's claim) waits for a busy core: 25-65 ms were seen on
// MariaDB, 70-206 ms on MySQL.

const PRODUCER = fileURLToPath(new URL('../../test/fixtures/enqueue-and-time.mjs', import.meta.url));
const POLL_INTERVAL_MS = 5000;
const WOKEN_WITHIN_MS = 1000;

let db: TestDatabase;
let queue: JobQueue;
let worker: Worker;
/** When each job's handler started, by id: wall-clock ms, comparable with another process's. */
const started = new Map<number, number>();
const wallClock = () => performance.timeOrigin + performance.now();

/** Users the producers connect as: the worker's own (root), and two others. */
const suffix = randomBytes(4).toString('hex');
const others = { plain: `jobq_plain_${suffix}`, seesAll: `jobq_sees_${suffix}` };
const password = `pw-${suffix}`;
const urlAs = (user: string) => {
  const server = new URL(SERVER_URL);
  return `mysql://${user}:${password}@${server.host}/${db.name}`;
};

before(async () => {
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
  for (const user of Object.values(others)) {
    await db.admin.query('CREATE USER ?@? IDENTIFIED BY ?', [user, '%', password]);
    await db.admin.query(`GRANT ALL ON \`${db.name}\`.* TO ?@?`, [user, '%']);
  }
  // PROCESS shows every user's connections in the process list; ending another user's statement
  // takes CONNECTION ADMIN (MariaDB) or CONNECTION_ADMIN (MySQL), which it does not have.
  await db.admin.query('GRANT PROCESS ON *.* TO ?@?', [others.seesAll, '%']);
  worker = queue.work(
    async (job) => {
      started.set(job.id, wallClock());
    },
    { pollIntervalMs: POLL_INTERVAL_MS },
  );
  const first = await queue.enqueue({ kind: 'ping' });
  await waitUntil(() => started.has(first), 'the first job ran');
});
after(async () => {
  await worker.stop();
  await queue.close();
  for (const user of Object.values(others)) await db.admin.query('DROP USER IF EXISTS ?@?', [user, '%']);
  await db.drop();
});

/**
 * Lets the worker's idle polls back off: from 2 ms, doubling, the wait under way after 4.2 s is
 * the one of 4 s. Not a wait for an outcome: the state the enqueue must find.
 */
const idleForFourSeconds = () => sleep(4200);

interface Produced {
  stdout: string;
  stderr: string;
  lines: Array<{ id: number; committedAt?: number; uncommittedAt?: number }>;
}

/** Runs the producer to its end, as `url`'s user; fails the test if it fails. */
async function produce(url: string, ...args: string[]): Promise<Produced> {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [PRODUCER, ...args], { env: { ...process.env, JOBQ_DATABASE_URL: url } });
  return { stdout, stderr, lines: stdout.trim().split('\n').map((line) => JSON.parse(line) as Produced['lines'][number]) };
}

/** The job's start, in ms after `since` (wall clock); waits for it up to 10 s (the poll comes within 5). */
async function startedAfter(id: number, since: number): Promise<number> {
  await waitUntil(() => started.has(id), `job ${id} started`, { timeoutMs: 10_000 });
  return started.get(id)! - since;
}

test('five jobs enqueued by other processes into an idle worker polling every 5 s: each starts within a second of its commit', async (t) => {
  const waits: number[] = [];
  for (let n = 0; n < 5; n++) {
    await idleForFourSeconds();
    const { lines, stderr } = await produce(db.url, '1');
    const [{ id, committedAt }] = lines as [{ id: number; committedAt: number }];
    waits.push(await startedAfter(id, committedAt));
    assert.equal(stderr, '');
  }
  const shown = waits.map((ms) => ms.toFixed(1)).join(', ');
  t.diagnostic(`started ${shown} ms after the commit`);
  assert.ok(
    waits.every((ms) => ms < WOKEN_WITHIN_MS),
    `started after ${shown} ms`,
  );
});

test("a job enqueued in a transaction of another process starts only after that transaction's commit, woken by wakeWorkers()", async () => {
  await idleForFourSeconds();
  const { lines } = await produce(db.url, '1', 'tx');
  const { id, committedAt } = lines.find((line) => line.committedAt !== undefined) as { id: number; committedAt: number };
  const ms = await startedAfter(id, committedAt);
  assert.ok(ms >= 0, `job ${id} started ${(-ms).toFixed(1)} ms before its transaction committed`);
  assert.ok(ms < WOKEN_WITHIN_MS, `job ${id} started ${ms.toFixed(1)} ms after its commit`);
});

test('a producer that connects as another user cannot wake the worker: its jobs still run (by the poll), with no error and no warning', async () => {
  const { lines, stderr } = await produce(urlAs(others.plain), '2');
  for (const { id } of lines) await startedAfter(id, 0);
  assert.equal(stderr, '');
});

test('a producer that sees the worker but may not end its statement says so once, and its jobs still run', async () => {
  await idleForFourSeconds();
  const { lines, stderr } = await produce(urlAs(others.seesAll), '2');
  for (const { id } of lines) await startedAfter(id, 0);
  const warnings = stderr.split('\n').filter((line) => line.includes('cannot wake a worker of this queue that connects as another user'));
  assert.equal(warnings.length, 1, stderr);
});
