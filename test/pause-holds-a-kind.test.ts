import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

const RECORD_IDS = fileURLToPath(new URL('../../test/fixtures/record-ids-handler.mjs', import.meta.url));
const context = queueForTests();

const statusCounts = async (kind: string) => {
  const rows = await context.db.rows<{ status: string; n: number }>('SELECT status, COUNT(*) AS n FROM jobs WHERE kind = ? GROUP BY status', [kind]);
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
};

test('a paused kind is not claimed while other kinds are; after resume it is', async () => {
  const { queue } = context;
  await queue.enqueueMany(Array.from({ length: 300 }, (_, n) => ({ kind: n % 2 ? 'email' : 'sms', payload: { n } })));
  await queue.pause('email');
  const handled: string[] = [];
  // One handler for every kind: the worker claims the whole queue, and must leave email out.
  const worker = queue.work(async (job) => void handled.push(job.kind!), { concurrency: 4, batchSize: 10 });
  const ran = (kind: string) => handled.filter((each) => each === kind).length;
  try {
    await waitUntil(() => ran('sms') === 150, 'the sms jobs ran');
    await queue.enqueueMany(Array.from({ length: 50 }, () => ({ kind: 'sms' })));
    await waitUntil(() => ran('sms') === 200, 'the sms jobs queued during the pause ran');
    // The worker has claimed past the email jobs many times by now.
    assert.equal(ran('email'), 0, 'no email job ran while email was paused');
    assert.deepEqual(await statusCounts('email'), { unclaimed: 150 });

    await queue.resume('email');
    await waitUntil(() => ran('email') === 150, 'after resume the email jobs ran');
    assert.equal(ran('sms'), 200);
  } finally {
    await worker.stop();
  }
});

test('pausing while a worker runs: it claims no more of that kind; jobs in hand finish', async () => {
  const { queue, db } = context;
  await db.admin.query(`DELETE FROM \`${db.name}\`.jobs`);
  await queue.enqueueMany(Array.from({ length: 3000 }, () => ({ kind: 'report' })));
  const worker = queue.work({ report: async () => sleep(2) }, { concurrency: 2, batchSize: 10 });
  try {
    while (((await statusCounts('report')).unclaimed ?? 0) > 2900) await sleep(20);
    await queue.pause('report');
    const pausedAt = performance.now();
    // A claim reads the paused kinds at most a second old: from then on, the jobs in hand finish.
    await waitUntil(async () => performance.now() - pausedAt > 1000 && (await statusCounts('report')).claimed === undefined, 'the jobs in hand have finished');
    const settled = await statusCounts('report');
    await sleep(2000); // the time in which a worker that ignored the pause would have claimed again
    const later = await statusCounts('report');
    assert.ok(later.unclaimed! > 2000, 'most jobs still wait');
    assert.equal(later.unclaimed, settled.unclaimed, `no report job was claimed a second after the pause (${JSON.stringify(settled)} then ${JSON.stringify(later)})`);
    assert.equal(later.claimed ?? 0, 0, 'the jobs in hand finished');
  } finally {
    await worker.stop();
    await queue.resume('report');
  }
});

test('jobq pause/resume: one line each, stats shows the paused kind, work --once leaves its jobs waiting', async () => {
  const { db } = context;
  await db.admin.query(`DELETE FROM \`${db.name}\`.jobs`);
  await db.admin.query('CREATE TABLE IF NOT EXISTS seen (id BIGINT NOT NULL)');
  const email = await context.queue.enqueue({ kind: 'email' });
  const sms = await context.queue.enqueue({ kind: 'sms' });

  const paused = await runCli(['pause', '--kind', 'email', '--database-url', db.url]);
  assert.equal(paused.code, 0, paused.stderr);
  assert.equal(paused.stdout, 'paused kind "email"; paused now: email\n');
  const stats = JSON.parse((await runCli(['stats', '--json', '--database-url', db.url])).stdout);
  assert.deepEqual(stats.pausedKinds, ['email']);
  const pausedOf = (kind: string) => stats.byKind.find((entry: { kind: string }) => entry.kind === kind)?.paused;
  assert.deepEqual([pausedOf('email'), pausedOf('sms')], [true, false]);
  const text = (await runCli(['stats', '--database-url', db.url])).stdout;
  assert.match(text, /^\| email  \|       1 \|         0 \|       0 \|       0 \|       0 \|         0 \|     yes \|$/m);

  const work = await runCli(['work', '--handler', RECORD_IDS, '--once', '--database-url', db.url], { JOBQ_DATABASE_URL: db.url });
  assert.equal(work.code, 0, work.stderr);
  assert.deepEqual((await db.rows<{ id: number }>('SELECT id FROM seen')).map((row) => Number(row.id)), [sms]);
  assert.deepEqual((await db.rows<{ id: number }>('SELECT id FROM jobs')).map((row) => Number(row.id)), [email], 'the paused job waits');

  const resumed = await runCli(['resume', '--kind', 'email', '--database-url', db.url]);
  assert.equal(resumed.stdout, 'resumed kind "email"; paused now: none\n');
  const bad = await runCli(['pause', '--kind', 'k'.repeat(65), '--database-url', db.url]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^jobq: kind must be a string of 1-64 characters/);
  const missing = await runCli(['pause', '--database-url', db.url]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^error: required option '--kind <kind>' not specified/);
});
