import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

const context = queueForTests();

test('prune: 20,000 done rows older than the cut go in chunks, 1,000 newer stay, while a worker keeps claiming', async () => {
  const { queue, db } = context;
  const table = `\`${db.name}\`.jobs`;
  for (let i = 0; i < 21; i++) await queue.enqueueMany(Array.from({ length: 1000 }, () => ({ kind: 'old' })));
  // 20,000 finished 8 days ago, the last 1,000 an hour ago.
  await db.admin.query(`UPDATE ${table} SET status = 'done', run_after = NOW(6) - INTERVAL 8 DAY`);
  await db.admin.query(`UPDATE ${table} SET run_after = NOW(6) - INTERVAL 1 HOUR ORDER BY id DESC LIMIT 1000`);
  const newest = await db.rows<{ id: number }>(`SELECT id FROM ${table} WHERE run_after > NOW(6) - INTERVAL 1 DAY ORDER BY id`);
  await queue.enqueueMany(Array.from({ length: 5000 }, (_, n) => ({ kind: 'live', payload: { n } })));

  const handled = new Set<number>();
  const worker = queue.work({ live: async (job) => void handled.add(job.id) }, { batchSize: 20, concurrency: 2 });
  const result = await queue.prune({ doneOlderThan: '7d' });
  await worker.stop();

  assert.deepEqual(result, { done: 20_000, failed: 0, cancelled: 0, keys: 0, windows: 0, groups: 0, chunks: 20 });
  const done = await db.rows<{ id: number }>(`SELECT id FROM ${table} WHERE status = 'done' ORDER BY id`);
  assert.deepEqual(done.map((r) => Number(r.id)), newest.map((r) => Number(r.id)), 'exactly the newer done rows are left');
  assert.ok(handled.size > 0, 'the worker claimed while the prune ran');
  const live = await db.rows<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE kind = 'live'`);
  assert.equal(handled.size + Number(live[0]!.n), 5000, 'no waiting job was pruned');
});

test('jobq prune says how many went; failed and cancelled jobs by their own age; no age given is a one-line error', async () => {
  const { db } = context;
  const table = `\`${db.name}\`.jobs`;
  await db.admin.query(`DELETE FROM ${table}`);
  await db.admin.query(`INSERT INTO ${table} (given_key, status, run_after) VALUES ('f1', 'failed', NOW(6) - INTERVAL 40 DAY), ('f2', 'failed', NOW(6) - INTERVAL 2 DAY), ('d1', 'done', NOW(6) - INTERVAL 40 DAY), ('c1', 'cancelled', NOW(6) - INTERVAL 40 DAY), ('c2', 'cancelled', NOW(6) - INTERVAL 2 DAY)`);
  const result = await runCli(['prune', '--failed-older-than', '30d', '--database-url', db.url]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout.trim(), 'pruned 0 done, 1 failed and 1 cancelled jobs in 2 chunks');
  const left = await db.rows<{ job_key: string }>(`SELECT job_key FROM ${table} ORDER BY job_key`);
  assert.deepEqual(left.map((r) => r.job_key), ['c2', 'd1', 'f2']);

  const none = await runCli(['prune', '--database-url', db.url]);
  assert.equal(none.code, 2);
  assert.equal(none.stderr.trim(), 'jobq: say what to prune: --done-older-than and/or --failed-older-than, e.g. --done-older-than 7d');
  const bad = await runCli(['prune', '--done-older-than', 'a week', '--database-url', db.url]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^error: option '--done-older-than <age>' argument 'a week' is invalid\. expected a length of time like 90s, 15m, 12h, 7d or 2w, got "a week"\.$/m);
  assert.equal((await db.rows(`SELECT 1 FROM ${table}`)).length, 3, 'no row changed by a refused prune');
});

test('prune deletes the lock rows of groups with no job waiting or running, keeps a running group\'s, and a later claim adds a row back under the same limit', async () => {
  const { queue, db } = context;
  const locks = async () => (await db.rows<{ job_group: string }>(`SELECT job_group FROM \`${db.name}\`.jobq_group_locks WHERE kind = 'mail' ORDER BY job_group`)).map((row) => row.job_group);
  await queue.setLimit('mail', { groupConcurrency: 1 });
  await queue.enqueueMany(['g1', 'g1', 'g2', 'g2', 'g3'].map((group) => ({ kind: 'mail', group })));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const ended = new Set<number>();
  let g3Started = false;
  const worker = queue.work(
    {
      mail: async (job) => {
        if (job.group === 'g3') {
          g3Started = true;
          await held;
        }
        ended.add(job.id);
      },
    },
    { concurrency: 5, once: true },
  );
  try {
    // Settled, not only ended: a job's handler returns before its worker's next turn deletes it.
    const settled = async () => (await db.rows(`SELECT 1 FROM \`${db.name}\`.jobs WHERE job_group IN ('g1', 'g2')`)).length === 0;
    await waitUntil(async () => ended.size === 4 && g3Started && (await settled()), 'the jobs of g1 and g2 were settled and g3\'s runs');
    assert.deepEqual(await locks(), ['g1', 'g2', 'g3']);
    const result = await queue.prune({ doneOlderThan: '1d' });
    assert.equal(result.groups, 2);
    assert.deepEqual(await locks(), ['g3'], 'the running group keeps its row');
  } finally {
    release();
    await worker.finished;
  }
  assert.equal((await runCli(['prune', '--done-older-than', '1d', '--database-url', db.url])).stdout.trim(), 'pruned 0 done, 0 failed and 0 cancelled jobs and 1 lock rows of idle groups in 1 chunk');
  assert.deepEqual(await locks(), []);

  // g1 again: its claims add its row back, and hold its limit of 1 across 2 workers.
  await queue.enqueueMany(Array.from({ length: 6 }, () => ({ kind: 'mail', group: 'g1' })));
  const ids = (await db.rows<{ id: number }>(`SELECT id FROM \`${db.name}\`.jobs WHERE job_group = 'g1' ORDER BY id`)).map((row) => Number(row.id));
  let running = 0;
  let most = 0;
  const runs: number[] = [];
  const handler = async (job: { id: number }) => {
    most = Math.max(most, ++running);
    await sleep(20);
    running--;
    runs.push(job.id);
  };
  const workers = [queue.work({ mail: handler }, { concurrency: 3, once: true }), queue.work({ mail: handler }, { concurrency: 3, once: true })];
  await Promise.all(workers.map((each) => each.finished));
  assert.deepEqual([...runs].sort((a, b) => a - b), ids, 'each of the 6 jobs ran once');
  assert.equal(most, 1, 'never two jobs of g1 at once');
  assert.deepEqual(await locks(), ['g1']);
});
