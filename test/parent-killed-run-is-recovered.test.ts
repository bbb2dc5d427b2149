import assert from 'node:assert/strict';
import { test } from 'node:test';
import { waitUntil } from './helpers/wait.js';
import { runCli, startCli } from './helpers/run-cli.js';
import { databaseForTests, prefill } from './helpers/queue-fixtures.js';
import { childProcesses, isAlive } from './helpers/processes.js';

const db = databaseForTests(async (db) => {
  await prefill(db.url, 3000);
});

test('kill -9 of the parent and all its workers mid-run, then a new run recovers every job', async () => {
  const first = startCli(['start-processing', '-g', '0', '-c', '6', '--work-ms', '2000', '--lease', '2', '--keep-done', '--database-url', db.url]);
  const owners = async () => Number((await db.rows<{ n: number }>("SELECT COUNT(DISTINCT owner_id) AS n FROM jobs WHERE status = 'claimed'"))[0]!.n);
  await waitUntil(async () => (await owners()) === 6, 'every consumer holds a batch');
  // A machine crash: nobody gets to finish a batch.
  const workers = childProcesses(first.pid).map((child) => child.pid);
  first.kill('SIGKILL');
  for (const pid of workers) process.kill(pid, 'SIGKILL');
  await first.done;
  await waitUntil(() => !workers.some(isAlive), 'the killed workers are gone');
  const [{ stranded }] = await db.rows<{ stranded: number }>("SELECT COUNT(*) AS stranded FROM jobs WHERE status = 'claimed'");
  assert.ok(Number(stranded) > 0, 'the crash left claimed jobs behind');

  const second = await runCli(['start-processing', '-g', '0', '-c', '4', '--until-empty', '--keep-done', '-q', '--database-url', db.url]);
  assert.equal(second.code, 0, second.stderr);
  const rows = await db.rows<{ status: string }>('SELECT status FROM jobs');
  assert.equal(rows.length, 3000);
  assert.ok(rows.every((row) => row.status === 'done'), 'every stranded job was recovered after its lease and processed');
});

test('kill -9 of the parent alone: the workers notice, finish their batch and exit', async () => {
  await db.admin.query('TRUNCATE TABLE jobs');
  await prefill(db.url, 500);
  const run = startCli(['start-processing', '-g', '1', '-c', '3', '--work-ms', '200', '--keep-done', '--database-url', db.url]);
  await run.waitFor(/^consumer  \d+ #records = /m);
  const workers = childProcesses(run.pid).map((child) => child.pid);
  run.kill('SIGKILL');
  await run.done;
  await waitUntil(() => !workers.some(isAlive), 'no orphaned worker keeps running', { timeoutMs: 10_000 });
  const [{ claimed }] = await db.rows<{ claimed: number }>("SELECT COUNT(*) AS claimed FROM jobs WHERE status = 'claimed'");
  assert.equal(Number(claimed), 0, 'the orphans settled their batches before leaving');
});

test('kill -9 of the parent while its workers are still starting: they notice too and exit', async () => {
  const run = startCli(['start-processing', '-g', '1', '-c', '3', '--work-ms', '200', '--keep-done', '--database-url', db.url]);
  let workers: number[] = [];
  await waitUntil(() => (workers = childProcesses(run.pid).map((child) => child.pid)).length === 4, 'the workers are forked', { everyMs: 5 });
  // Forked, but loading their modules: they have not yet heard from, or listened to, the supervisor.
  run.kill('SIGKILL');
  // Orphans that outlive the wait are killed here, so that the test fails without leaving them.
  await waitUntil(() => !workers.some(isAlive), 'the workers exit', { timeoutMs: 10_000 }).catch(() => undefined);
  const orphans = workers.filter(isAlive);
  for (const pid of orphans) process.kill(pid, 'SIGKILL');
  await run.done;
  assert.deepEqual(orphans, [], 'no orphaned worker keeps running');
});
