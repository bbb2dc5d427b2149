import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { duplicates, runCli, startCli, type CliRun } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

const HANDLER = fileURLToPath(new URL('../../test/fixtures/poison-handler.mjs', import.meta.url));
const context = queueForTests();

async function statusCounts(): Promise<Record<string, number>> {
  const rows = await context.db.rows<{ status: string; n: number }>('SELECT status, COUNT(*) AS n FROM jobs GROUP BY status');
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
}

async function seenIds(): Promise<number[]> {
  return (await context.db.rows<{ id: number }>('SELECT id FROM seen')).map((row) => Number(row.id));
}

test('rolling deploy: the worker process replaced 10 times while it runs jobs: no job fails, each runs once', async () => {
  const { queue, db } = context;
  await db.admin.query('CREATE TABLE seen (id BIGINT NOT NULL)');
  let queued = 0;
  // Jobs keep waiting throughout: each new worker is up once it holds some (a claim records its pid
  // as owner), as a deploy waits for readiness, and none is stopped before it is.
  const keepJobsWaiting = async () => {
    if (((await statusCounts()).unclaimed ?? 0) >= 1000) return;
    await queue.enqueueMany(Array.from({ length: 1000 }, () => ({ kind: 'deploy' })));
    queued += 1000;
  };
  const env = { JOBQ_DATABASE_URL: db.url, RECORD_DELAY_MS: '20' };
  const args = ['work', '--handler', HANDLER, '--keep-done', '--concurrency', '10', '--database-url', db.url];
  const holdsJobs = async (worker: CliRun) => (await db.rows("SELECT 1 FROM jobs WHERE status = 'claimed' AND owner_id = ? LIMIT 1", [worker.pid])).length > 0;
  const up = (worker: CliRun) =>
    waitUntil(async () => {
      await keepJobsWaiting();
      return holdsJobs(worker);
    }, 'the new worker claims');
  const stopped: CliRun[] = [];
  let current = startCli(args, env);
  try {
    await up(current);
    for (let deploy = 0; deploy < 10; deploy++) {
      const next = startCli(args, env);
      stopped.push(current);
      await up(next);
      current.kill('SIGTERM'); // graceful: running jobs finish, claimed ones not started go back
      current = next;
    }
  } catch (error) {
    for (const worker of [...stopped, current]) worker.kill('SIGKILL');
    throw error;
  }
  current.kill('SIGTERM');
  stopped.push(current);
  for (const worker of stopped) {
    const { code, stderr } = await worker.done;
    assert.equal(code, 0, stderr);
  }
  const drain = await runCli([...args, '--once'], env);
  assert.equal(drain.code, 0, drain.stderr);

  assert.deepEqual(await statusCounts(), { done: queued }, 'every job done, none failed');
  const seen = await seenIds();
  assert.equal(seen.length, queued);
  assert.deepEqual(duplicates(seen), [], 'no job ran twice');
  const [{ most }] = await db.rows<{ most: number }>('SELECT MAX(attempts) AS most FROM jobs');
  assert.equal(Number(most), 1, 'no release spent an attempt');
});

test('a job that kills its process, among 3,000: it alone ends failed, with the error that says why', async () => {
  const { queue, db } = context;
  await db.admin.query('DELETE FROM jobs');
  await db.admin.query('CREATE TABLE IF NOT EXISTS seen (id BIGINT NOT NULL)');
  await db.admin.query('DELETE FROM seen');
  const jobs = Array.from({ length: 3000 }, (_, n) => ({ kind: 'batch', payload: { n, poison: n === 1500 } }));
  await queue.enqueueMany(jobs);
  const [{ poisonId }] = await db.rows<{ poisonId: number }>("SELECT id AS poisonId FROM jobs WHERE JSON_EXTRACT(payload, '$.poison') = true");
  // Three worker processes, restarted by their supervisor when one dies; short leases, but not so
  // short that a process starved of CPU loses them: in CI, with both servers' suites on 2 cores,
  // leases of 1 s ran out under live processes, and a job that lost three of them in a row failed
  // beside the poison one. Small batches: every job a dying process held has its lease run out and
  // is then claimed alone.
  const run = startCli(['work', '--handler', HANDLER, '--processes', '3', '--lease', '3', '--batch-size', '20', '--keep-done', '--database-url', db.url], { JOBQ_DATABASE_URL: db.url });
  let counts: Record<string, number> = {};
  const settled = await waitUntil(async () => {
    counts = await statusCounts();
    return counts.unclaimed === undefined && counts.claimed === undefined;
  }, 'every job is done or failed', { timeoutMs: 90_000, everyMs: 200 }).catch((error: Error) => error);
  run.kill('SIGTERM');
  const { stderr } = await run.done;
  assert.equal(settled, undefined, `${settled}: ${JSON.stringify(counts)}; the run said:\n${stderr}`);
  const failedJobs = async () => JSON.stringify(await db.rows("SELECT id, attempts, lease_expiries, last_error FROM jobs WHERE status = 'failed'"));
  assert.deepEqual(counts, { done: 2999, failed: 1 }, `failed: ${await failedJobs()}; the poison job: ${poisonId}; the run said:\n${stderr}`);
  assert.equal(stderr.match(/died \(killed by SIGKILL\)/g)?.length, 3, `the poison job crashed three processes, no more:\n${stderr}`);
  const failed = await db.rows<{ id: number; attempts: number; lease_expiries: number; last_error: string }>("SELECT id, attempts, lease_expiries, last_error FROM jobs WHERE status = 'failed'");
  assert.deepEqual(failed.map((row) => [Number(row.id), row.attempts, row.lease_expiries]), [[Number(poisonId), 1, 3]]);
  assert.match(failed[0]!.last_error, /^its lease ran out 3 times in a row without a worker settling it/);
  const seen = await seenIds();
  assert.equal(new Set(seen).size, 2999, 'every other job ran');
  // A job whose handler had returned when its process died ran again after its lease: those only.
  const expired = new Set((await db.rows<{ id: number }>('SELECT id FROM jobs WHERE lease_expiries > 0')).map((row) => Number(row.id)));
  assert.deepEqual(duplicates(seen).filter((id) => !expired.has(id)), [], 'no job ran twice but after its lease ran out');
});
