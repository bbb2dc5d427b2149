import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { databaseForTests, prefill } from './helpers/queue-fixtures.js';

const WORKER = fileURLToPath(new URL('../../test/fixtures/work-until-drained.mjs', import.meta.url));
const JOBS = 20_000;

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
