import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli, startCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

// jobq keeps the counts of done and failed jobs (jobq_counters) instead of counting them: after
// every statement that makes or removes such a job, and after a worker killed mid-run, they must
// equal a full count of the table.

const FLAKY = fileURLToPath(new URL('../../test/fixtures/flaky-handler.cjs', import.meta.url));
const context = queueForTests();

type Counts = Record<string, { done: number; failed: number }>;

/** Done and failed jobs per kind ('' for none), by a full count of the table. */
async function fullCount(): Promise<Counts> {
  const rows = await context.db.rows<{ kind: string; status: 'done' | 'failed'; n: number }>(
    "SELECT IFNULL(kind, '') AS kind, status, COUNT(*) AS n FROM jobs WHERE status IN ('done', 'failed') GROUP BY kind, status",
  );
  const counts: Counts = {};
  for (const { kind, status, n } of rows) (counts[kind] ??= { done: 0, failed: 0 })[status] = Number(n);
  return counts;
}

/** The kept counts per kind, kinds with none left out. */
async function kept(): Promise<Counts> {
  const rows = await context.db.rows<{ kind: string; done: string; failed: string }>(
    "SELECT kind, SUM(done_jobs) AS done, SUM(failed_jobs) AS failed FROM jobq_counters WHERE queue = 'jobs' GROUP BY kind",
  );
  return Object.fromEntries(rows.filter((row) => Number(row.done) !== 0 || Number(row.failed) !== 0).map((row) => [row.kind, { done: Number(row.done), failed: Number(row.failed) }]));
}

async function assertKept(after: string): Promise<void> {
  assert.deepEqual(await kept(), await fullCount(), `kept counts after ${after}`);
}

/** Claimed jobs whose lease ran out, as if their worker had died long ago. */
const expireLeases = () => context.db.admin.query("UPDATE jobs SET run_after = NOW(6) - INTERVAL 1 SECOND WHERE status = 'claimed'");

test('every path that makes or removes a done or failed job keeps the counts equal to a full count, and stats() reports them', async () => {
  const { queue } = context;
  await queue.enqueueMany(Array.from({ length: 90 }, (_, n) => ({ ...(n % 3 !== 2 && { kind: n % 3 === 0 ? 'email' : 'report' }), payload: { n } })));

  const first = await queue.claim({ batchSize: 30, leaseSeconds: 60 });
  assert.equal((await queue.complete(first, { keepDone: true })).settled, 30);
  await assertKept('completing 30 jobs of three kinds, kept done');

  const second = await queue.claim({ batchSize: 20, leaseSeconds: 60 });
  const failed = await queue.fail(second, new Error('boom'), { maxAttempts: 1 });
  assert.equal(failed.failed, 20);
  await assertKept('failing 20 jobs for good');

  // A retried job is neither done nor failed; one that fails for good later is.
  const third = await queue.claim({ batchSize: 10, leaseSeconds: 60 });
  await queue.fail(third, new Error('once'), { maxAttempts: 2, retryDelayMs: 0 });
  await assertKept('retrying 10 jobs');

  // A settle that comes after the lease ran out and another claim took a job changes nothing of
  // that job (a job whose lease ran out is claimed alone).
  const lost = await queue.claim({ batchSize: 5, leaseSeconds: 60 });
  await expireLeases();
  const taker = await queue.claim({ batchSize: 5, leaseSeconds: 60 });
  assert.equal(taker.jobs.length, 1);
  assert.deepEqual(await queue.complete(lost, { keepDone: true }), { settled: 4, lost: 1 });
  await assertKept('a settle of a claim that lost one job');
  assert.equal((await queue.fail(lost, new Error('late'), { maxAttempts: 1 })).lost, 5);
  await assertKept('settles of a lost claim');
  await queue.complete(taker, { keepDone: true });
  await assertKept('the second claim completing them');

  // A job whose lease runs out three times goes to failed in the claim that finds it so.
  const crashing = await queue.claim({ batchSize: 2, leaseSeconds: 60 });
  for (let expiry = 1; expiry < 3; expiry++) {
    await expireLeases();
    assert.equal((await queue.claim({ batchSize: 2, leaseSeconds: 60 })).jobs.length, 1, 'a suspect is claimed alone');
  }
  await expireLeases();
  const exhausting = await queue.claim({ batchSize: 50, leaseSeconds: 60 });
  assert.ok(exhausting.failedIds.length >= 1, `a job failed by its lease expiries (${crashing.jobs.length} claimed at first)`);
  await assertKept('a claim that fails jobs whose lease ran out too often');
  await queue.release(exhausting, {});

  const [someFailed] = await context.db.rows<{ ids: string }>("SELECT GROUP_CONCAT(id) AS ids FROM (SELECT id FROM jobs WHERE status = 'failed' ORDER BY id LIMIT 4) AS f");
  const cancelled = await queue.cancel(someFailed!.ids.split(',').map(Number));
  assert.equal(cancelled.cancelled.length, 4);
  await assertKept('cancelling 4 failed jobs');

  const [twoFailed] = await context.db.rows<{ ids: string }>("SELECT GROUP_CONCAT(id) AS ids FROM (SELECT id FROM jobs WHERE status = 'failed' ORDER BY id LIMIT 2) AS f");
  assert.equal(await queue.requeueFailed(twoFailed!.ids.split(',').map(Number)), 2);
  await assertKept('requeueing 2 failed jobs by id');

  // stats() reads the kept counts for done and failed, and counts the rest.
  const [byStatus] = await context.db.rows<Record<string, number>>(
    "SELECT SUM(status = 'unclaimed') AS unclaimed, SUM(status = 'claimed') AS claimed, SUM(status = 'done') AS done, SUM(status = 'failed') AS failed FROM jobs",
  );
  const stats = await queue.stats();
  assert.deepEqual(stats.counts, Object.fromEntries(Object.entries(byStatus!).map(([status, n]) => [status, Number(n)])));
  const full = await fullCount();
  for (const entry of stats.byKind) assert.deepEqual({ done: entry.counts.done, failed: entry.counts.failed }, full[entry.kind ?? ''] ?? { done: 0, failed: 0 }, `stats of kind ${entry.kind}`);

  assert.ok((await queue.requeueFailed()) > 0);
  await assertKept('requeueing every failed job');

  await new Promise((resolve) => setTimeout(resolve, 20));
  const pruned = await queue.prune({ doneOlderThan: 0.01 });
  assert.ok(pruned.done > 0);
  await assertKept('pruning done jobs');
  assert.deepEqual(await kept(), {}, 'nothing done or failed is left');
});

test('a recount, from the library and `jobq stats --recount`, repairs counts that rows changed by hand put wrong', async () => {
  const { queue, db } = context;
  await queue.enqueueMany(Array.from({ length: 6 }, () => ({ kind: 'email' })));
  await queue.complete(await queue.claim({ batchSize: 6, leaseSeconds: 60 }), { keepDone: true });
  await db.admin.query("UPDATE jobs SET status = 'failed' WHERE status = 'done' LIMIT 2");
  assert.notDeepEqual(await kept(), await fullCount());
  await queue.recount();
  await assertKept('queue.recount()');
  await db.admin.query("UPDATE jobs SET status = 'done' WHERE status = 'failed' LIMIT 1");
  const stats = await runCli(['stats', '--recount', '--json', '--database-url', db.url]);
  assert.equal(stats.code, 0, stats.stderr);
  assert.deepEqual({ done: JSON.parse(stats.stdout).counts.done, failed: JSON.parse(stats.stdout).counts.failed }, { done: 5, failed: 1 });
  await assertKept('jobq stats --recount');
  await db.admin.query("DELETE FROM jobs WHERE status IN ('done', 'failed')");
  // A job of a kind that enqueue did not list (as an older jobq did not) counts under its kind after a recount.
  await queue.enqueue({ kind: 'unlisted' });
  await db.admin.query("DELETE FROM jobq_counters WHERE kind = 'unlisted'");
  assert.equal((await queue.stats()).byKind.find((entry) => entry.kind === 'unlisted'), undefined);
  await queue.recount();
  assert.equal((await queue.stats()).byKind.find((entry) => entry.kind === 'unlisted')?.counts.unclaimed, 1);
});

test('4 `jobq work --keep-done` processes, one killed with SIGKILL mid-run, recounts meanwhile, over 3,000 jobs of which 300 fail: the counts never go below zero and end equal to a full count', async () => {
  const { queue, db } = context;
  await db.admin.query('CREATE TABLE attempts (id BIGINT NOT NULL, attempt INT NOT NULL, at TIMESTAMP(6) NOT NULL)');
  await db.admin.query('DELETE FROM jobs');
  await queue.recount();
  const kinds = ['email', 'report', 'sms'];
  await queue.enqueueMany(Array.from({ length: 3000 }, (_, n) => ({ kind: kinds[n % 3]!, payload: { fail: n % 10 === 0 } })));
  const args = ['work', '--handler', FLAKY, '--keep-done', '--max-attempts', '1', '--lease', '2', '--concurrency', '10', '--batch-size', '20', '--once', '--database-url', db.url];
  const workers = Array.from({ length: 4 }, () => startCli(args, { JOBQ_DATABASE_URL: db.url }));
  let lowest = 0;
  let running = true;
  void Promise.all(workers.map((worker) => worker.done)).then(() => (running = false));
  const sampling = (async () => {
    while (running) {
      for (const counts of Object.values(await kept())) lowest = Math.min(lowest, counts.done, counts.failed);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  await waitUntil(async () => (await db.rows("SELECT id FROM jobs WHERE status = 'done' LIMIT 500")).length >= 500, 'the workers to finish 500 jobs');
  workers[0]!.kill('SIGKILL');
  // Recounts while the others settle: each waits for the settles in flight, which add theirs after it.
  let recounts = 0;
  while (running && recounts < 5) {
    await queue.recount();
    recounts++;
  }
  for (const worker of workers.slice(1)) assert.equal((await worker.done).code, 0);
  await sampling;
  const full = await fullCount();
  assert.deepEqual(full, { email: { done: 900, failed: 100 }, report: { done: 900, failed: 100 }, sms: { done: 900, failed: 100 } });
  assert.deepEqual(await kept(), full);
  assert.equal(lowest, 0, 'no kept count went below zero');
});
