import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';

const RECORD_IDS = fileURLToPath(new URL('../../test/fixtures/record-ids-handler.mjs', import.meta.url));
const context = queueForTests();

const statusCounts = async (kind: string) => {
  const rows = await context.db.rows<{ status: string; n: number }>('SELECT status, COUNT(*) AS n FROM jobs WHERE kind = ? GROUP BY status', [kind]);
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
};

test('a paused kind is not claimed for 5 s while other kinds are; after resume it is', async () => {
  const { queue } = context;
  await queue.enqueueMany(Array.from({ length: 300 }, (_, n) => ({ kind: n % 2 ? 'email' : 'sms', payload: { n } })));
  await queue.pause('email');
  const handled: string[] = [];
  // One handler for every kind: the worker claims the whole queue, and must leave email out.
  const worker = queue.work(async (job) => void handled.push(job.kind!), { concurrency: 4, batchSize: 10 });
  try {
    await sleep(1000);
    await queue.enqueueMany(Array.from({ length: 50 }, () => ({ kind: 'sms' })));
    await sleep(4000);
    assert.equal(handled.filter((kind) => kind === 'email').length, 0, 'no email job ran while email was paused');
    assert.equal(handled.filter((kind) => kind === 'sms').length, 200, 'every sms job ran, also those queued during the pause');
    assert.deepEqual(await statusCounts('email'), { unclaimed: 150 });

    await queue.resume('email');
    const resumedAt = performance.now();
    while (handled.length < 350 && performance.now() - resumedAt < 5000) await sleep(20);
    assert.equal(handled.filter((kind) => kind === 'email').length, 150, 'after resume the email jobs ran');
  } finally {
    await worker.stop();
  }
});

test('pausing while a worker runs: within a second it claims no more of that kind; jobs in hand finish', async () => {
  const { queue, db } = context;
  await db.admin.query(`DELETE FROM \`${db.name}\`.jobs`);
  await queue.enqueueMany(Array.from({ length: 3000 }, () => ({ kind: 'report' })));
  const worker = queue.work({ report: async () => sleep(2) }, { concurrency: 2, batchSize: 10 });
  try {
    while (((await statusCounts('report')).unclaimed ?? 0) > 2900) await sleep(20);
    await queue.pause('report');
    await sleep(1000);
    const settled = await statusCounts('report');
    await sleep(2000);
    const later = await statusCounts('report');
    assert.ok(later.unclaimed! > 2000, 'most jobs still wait');
    assert.equal(later.unclaimed, settled.unclaimed, `no report job was claimed from 1 s after the pause on (${JSON.stringify(settled)} then ${JSON.stringify(later)})`);
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
  assert.match(text, /^\| email  \|       1 \|       0 \|       0 \|       0 \|       0 \|     yes \|$/m);

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
