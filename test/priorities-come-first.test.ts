import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';

const context = queueForTests();

test('1,000 jobs at priority 5, then 100 at priority 1: one worker (concurrency 1, batch 10) handles the 100 first', async () => {
  const { queue } = context;
  await queue.enqueueMany(Array.from({ length: 1000 }, (_, n) => ({ kind: 'low', payload: { n }, priority: 5 })));
  const urgent = await queue.enqueueMany(Array.from({ length: 100 }, (_, n) => ({ kind: 'high', payload: { n }, priority: 1 })));
  const order: string[] = [];
  const worker = queue.work(async (job) => void order.push(job.kind!), { concurrency: 1, batchSize: 10, once: true });
  await worker.finished;
  assert.equal(order.length, 1100);
  // The worker takes its three lanes in turn: the urgent jobs of the other lanes come with the
  // claim that holds any lane, as soon as that lane's own next job is less urgent.
  assert.deepEqual(order.slice(0, 100), Array(100).fill('high'), `first low job at position ${order.indexOf('low')}`);
  assert.equal(urgent.lastId! - urgent.firstId! + 1, 100);
});

test('a job queued at a smaller priority while a backlog waits is claimed by the next claim, in any lane', async () => {
  const { queue } = context;
  await queue.enqueueMany(Array.from({ length: 300 }, () => ({ kind: 'backlog' })));
  const handled: number[] = [];
  let urgent = 0;
  let claimedBefore = new Set<number>();
  const worker = queue.work(
    async (job) => {
      handled.push(job.id);
      if (handled.length > 1) return;
      // Queued during the first job: every lane still has backlog ahead of it by age.
      const claimed = await context.db.rows<{ id: number }>("SELECT id FROM jobs WHERE status = 'claimed'");
      claimedBefore = new Set(claimed.map((row) => Number(row.id)));
      urgent = await queue.enqueue({ kind: 'urgent', priority: -1 });
    },
    { concurrency: 1, batchSize: 10, once: true },
  );
  await worker.finished;
  assert.equal(handled.length, 301);
  // Ahead of it ran the jobs in hand when it came, and at most those of the claims under way then
  // (a worker runs up to two claim loops).
  const overtaking = handled.slice(0, handled.indexOf(urgent)).filter((id) => !claimedBefore.has(id));
  assert.ok(overtaking.length <= 20, `${overtaking.length} jobs claimed after the urgent one was queued ran before it`);
});

test('a claim whose lane holds only less urgent jobs than it last saw takes the more urgent jobs of the other lanes', async () => {
  const { db, queue } = context;
  await db.admin.query('DELETE FROM jobs');
  await queue.enqueueMany(Array.from({ length: 60 }, () => ({ kind: 'lanes', priority: 5 })));
  // Lane 0 of 3 keeps only jobs at 5 (ids step by 1 on one server); the others hold 40 jobs at 1.
  await db.admin.query('UPDATE jobs SET priority = 1 WHERE id MOD 3 <> 0');
  // The claim looks below the default priority for a job ahead of its lane, finds none there, and
  // must still read the head of the queue: its lane's least urgent job is at 5.
  const claim = await queue.claim({ batchSize: 10, lane: { index: 0, count: 3 } });
  assert.deepEqual(claim.jobs.map((job) => job.priority), Array(10).fill(1));
  await queue.complete(claim);
  await db.admin.query('DELETE FROM jobs');
});

test('jobq enqueue takes --priority and a "priority" field on --stdin lines', async () => {
  const { db } = context;
  await db.admin.query('DELETE FROM jobs');
  const flag = await runCli(['enqueue', '--kind', 'k', '--priority', '-7', '--database-url', db.url]);
  assert.equal(flag.code, 0, flag.stderr);
  const lines = await runCli(['enqueue', '--stdin', '--priority', '3', '--database-url', db.url], {}, '{"kind": "k", "priority": 2}\n{"kind": "k"}\n');
  assert.equal(lines.code, 0, lines.stderr);
  const rows = await db.rows<{ priority: number }>('SELECT priority FROM jobs ORDER BY id');
  assert.deepEqual(rows.map((r) => r.priority), [-7, 2, 3]);
});
