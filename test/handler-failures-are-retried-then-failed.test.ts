import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { databaseForTests } from './helpers/queue-fixtures.js';
import { startCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

const HANDLER = fileURLToPath(new URL('../../test/fixtures/flaky-handler.cjs', import.meta.url));

const db = databaseForTests(async (db) => {
  const queue = await JobQueue.open(db.url);
  await queue.setup();
  await queue.enqueueMany([1, 2, 3, 4, 5, 6].map((n) => ({ kind: 'task', payload: { n, fail: n % 3 === 0 } })));
  await queue.close();
  await db.admin.query('CREATE TABLE attempts (id BIGINT NOT NULL, attempt INT NOT NULL, at TIMESTAMP(6) NOT NULL)');
});

test('a throwing handler: its jobs are retried with growing delays and end failed with the error; the others complete', async () => {
  const run = startCli(['work', '--handler', HANDLER, '--max-attempts', '4', '--retry-delay-ms', '300', '--kind', 'task', '--database-url', db.url], {
    JOBQ_DATABASE_URL: db.url,
  });
  const failedJobs = async () => Number((await db.rows<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE status = 'failed'"))[0]!.n);
  try {
    await waitUntil(async () => (await failedJobs()) === 2, 'both throwing jobs have failed', { everyMs: 200 });
  } finally {
    run.kill('SIGTERM');
  }
  const result = await run.done;
  assert.equal(result.code, 0, result.stderr);

  const left = await db.rows<{ id: number; status: string; attempts: number; last_error: string; payload: string }>(
    'SELECT id, status, attempts, last_error, CAST(payload AS CHAR) AS payload FROM jobs ORDER BY id',
  );
  assert.deepEqual(
    left.map((job) => [JSON.parse(job.payload).n, job.status, job.attempts, job.last_error]),
    [
      [3, 'failed', 4, `boom ${left[0]!.id}`],
      [6, 'failed', 4, `boom ${left[1]!.id}`],
    ],
    'the failing jobs end failed after 4 attempts with their error; the others were completed and deleted',
  );
  for (const { id } of left) {
    const times = (await db.rows<{ ms: number }>('SELECT UNIX_TIMESTAMP(at) * 1000 AS ms FROM attempts WHERE id = ? ORDER BY attempt', [id])).map((row) => Number(row.ms));
    assert.equal(times.length, 4);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    // 300, 600, 1200 ms: each wait at least its delay, and each longer than the one before.
    gaps.forEach((gap, i) => assert.ok(gap >= 300 * 2 ** i - 5, `retry ${i + 1} of job ${id} waited ${gap} ms`));
    assert.ok(gaps[2]! > gaps[0]!, `delays grow: ${gaps.join(', ')}`);
  }
  const okAttempts = await db.rows('SELECT id FROM attempts WHERE id NOT IN (?) GROUP BY id HAVING COUNT(*) = 1', [left.map((job) => job.id)]);
  assert.equal(okAttempts.length, 4, 'the jobs that succeeded ran once each');
  assert.match(result.stderr, /job \d+ failed \(attempt 1 of 4\): boom \d+; will be retried/);
  assert.match(result.stderr, /job \d+ failed \(attempt 4 of 4\): boom \d+; moved to failed/);
});
