import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { databaseForTests, prefill } from './helpers/queue-fixtures.js';
import { startCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

const WORKER = fileURLToPath(new URL('../../test/fixtures/work-until-drained.mjs', import.meta.url));
const RECORD_IDS = fileURLToPath(new URL('../../test/fixtures/record-ids-handler.mjs', import.meta.url));
const PRODUCER = fileURLToPath(new URL('../../test/fixtures/enqueue-one-at-a-time.mjs', import.meta.url));
const JOBS = 20_000;
const PRODUCED = 4_000;

const db = databaseForTests(async (db) => {
  await prefill(db.url, JOBS);
  await db.admin.query('CREATE TABLE seen (id BIGINT NOT NULL, KEY (id))');
});

test('4 worker processes with no parent in common, queue.work at concurrency 10 each: every job handled exactly once', async () => {
  const runs = Array.from({ length: 4 }, () =>
    promisify(execFile)(process.execPath, [WORKER], { env: { ...process.env, JOBQ_DATABASE_URL: db.url } }),
  );
  const counters = (await Promise.all(runs)).map(({ stdout }) => JSON.parse(stdout) as { completed: number; claims: number; emptyClaims: number });
  const [seen] = await db.rows<{ total: number; distinct_: number }>('SELECT COUNT(*) AS total, COUNT(DISTINCT id) AS distinct_ FROM seen');
  assert.equal(Number(seen!.distinct_), JOBS, 'every job handled');
  assert.equal(Number(seen!.total), JOBS, 'no job handled twice');
  assert.equal(counters.reduce((sum, c) => sum + c.completed, 0), JOBS, 'the workers count what they did');
  assert.ok(counters.every((c) => c.completed > 0), `every worker got work: ${JSON.stringify(counters)}`);
  assert.equal((await db.rows('SELECT id FROM jobs')).length, 0, 'completed jobs are deleted');
});

test('4 idle worker processes woken by 2 producer processes enqueueing one job at a time: every job handled exactly once', async () => {
  // Workers woken on an empty queue: their claims hold no lane and lock the jobs as they read them (sql/claim.ts, candidatesLocked).
  await db.admin.query('TRUNCATE TABLE seen');
  const env = { JOBQ_DATABASE_URL: db.url };
  const workers = Array.from({ length: 4 }, () => startCli(['work', '--handler', RECORD_IDS, '--poll-interval-ms', '1000', '--light-claim-pause-ms', '0'], env));
  const produce = () => promisify(execFile)(process.execPath, [PRODUCER, String(PRODUCED / 2), 'trickle'], { env: { ...process.env, ...env } });
  await Promise.all([produce(), produce()]);
  const seen = async () => (await db.rows<{ total: number; distinct_: number }>('SELECT COUNT(*) AS total, COUNT(DISTINCT id) AS distinct_ FROM seen'))[0]!;
  await waitUntil(async () => Number((await seen()).total) >= PRODUCED, `${PRODUCED} jobs handled`);
  for (const worker of workers) worker.kill('SIGTERM');
  const ends = await Promise.all(workers.map((worker) => worker.done));
  assert.deepEqual(ends.map((end) => end.code), [0, 0, 0, 0], ends.map((end) => end.stderr).join('\n'));
  const counted = await seen();
  assert.equal(Number(counted.distinct_), PRODUCED, 'every job handled');
  assert.equal(Number(counted.total), PRODUCED, 'no job handled twice');
  assert.equal((await db.rows('SELECT id FROM jobs')).length, 0, 'completed jobs are deleted');
});
