import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { prefill, queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';

const RECORD_IDS = fileURLToPath(new URL('../../test/fixtures/record-ids-handler.mjs', import.meta.url));
const context = queueForTests();

const totalsByKind = async () => {
  const stats = await context.queue.stats();
  return Object.fromEntries(stats.byKind.map((entry) => [String(entry.kind), entry.totals]));
};

test('jobq work --processes 2 over 10,000 jobs of two kinds: the completed totals equal the jobs handled, per kind, after the rows are gone', async () => {
  const { queue, db } = context;
  await db.admin.query(`CREATE TABLE \`${db.name}\`.seen (id BIGINT NOT NULL)`);
  await queue.enqueueMany(Array.from({ length: 10_000 }, (_, n) => ({ kind: n % 4 === 0 ? 'report' : 'email' })));
  const work = await runCli(['work', '--handler', RECORD_IDS, '--processes', '2', '--once', '--database-url', db.url], { JOBQ_DATABASE_URL: db.url });
  assert.equal(work.code, 0, work.stderr);
  assert.equal((await db.rows('SELECT id FROM seen')).length, 10_000);
  assert.equal((await db.rows('SELECT id FROM jobs')).length, 0, 'every job deleted');
  const totals = await totalsByKind();
  assert.deepEqual(totals.email, { completed: 7500, failed: 0, retried: 0 });
  assert.deepEqual(totals.report, { completed: 2500, failed: 0, retried: 0 });
});

test('failures: retried and failed for good are counted apart from completed', async () => {
  const { queue } = context;
  await queue.enqueueMany(Array.from({ length: 5 }, () => ({ kind: 'flaky' })));
  await queue.enqueueMany(Array.from({ length: 20 }, () => ({ kind: 'steady' })));
  const worker = queue.work(
    {
      flaky: async () => {
        throw new Error('always');
      },
      steady: async () => undefined,
    },
    { maxAttempts: 2, retryDelayMs: 10 },
  );
  // Not `once`: a retry waiting out its delay is not due, and `once` would stop before it.
  while (worker.counters.failed < 5 || worker.counters.completed < 20) await new Promise((resolve) => setTimeout(resolve, 20));
  await worker.stop();
  const totals = await totalsByKind();
  assert.deepEqual(totals.flaky, { completed: 0, failed: 5, retried: 5 });
  assert.deepEqual(totals.steady, { completed: 20, failed: 0, retried: 0 });
});

test("start-processing's consumers count too: 5,000 demo jobs drained, 5,000 completed without a kind", async () => {
  const { db } = context;
  await prefill(db.url, 5000);
  const run = await runCli(['start-processing', '-g', '0', '-c', '4', '--until-empty', '-q', '--database-url', db.url]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual((await totalsByKind()).null, { completed: 5000, failed: 0, retried: 0 });
});
