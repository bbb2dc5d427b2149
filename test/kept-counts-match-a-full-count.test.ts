import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import mysql from 'mysql2/promise';
import { queueForTests } from './helpers/queue-fixtures.js';
import { serverConnectionOptions } from './helpers/test-database.js';
import { runCli, startCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';
import { entriesReadBy } from './helpers/session-counters.js';
import { UNCOUNTED_TOKEN } from '../src/claim/sql/counters.js';
import { foldUncountedJobs } from '../src/queue/uncounted-jobs.js';
import { Database } from '../src/db/database.js';
import { parseDatabaseUrl } from '../src/config/database-url.js';
import { quoteIdentifier } from '../src/config/identifiers.js';
import type { QueueStats } from '../src/index.js';

// jobq keeps the counts of waiting, done and failed jobs (jobq_counters, jobq_new_jobs for new
// ones, and waiting jobs marked as not counted yet) instead of counting them: after every
// statement that makes, moves or removes such a job, and after a worker killed mid-run, they must
// equal a full count of the table.

const FLAKY = fileURLToPath(new URL('../../test/fixtures/flaky-handler.cjs', import.meta.url));
const ONE_MS = fileURLToPath(new URL('../../test/fixtures/one-ms-handler.mjs', import.meta.url));
const PRODUCER = fileURLToPath(new URL('../../test/fixtures/enqueue-one-at-a-time.mjs', import.meta.url));
const context = queueForTests();

type Counts = Record<string, { waiting: number; done: number; failed: number; cancelled: number }>;
const STATUSES = { unclaimed: 'waiting', scheduled: 'waiting', done: 'done', failed: 'failed', cancelled: 'cancelled' } as const;

/** Waiting, done, failed and cancelled jobs per kind ('' for none), by a full count of the table. */
async function fullCount(): Promise<Counts> {
  const rows = await context.db.rows<{ kind: string; status: keyof typeof STATUSES; n: number }>(
    "SELECT IFNULL(kind, '') AS kind, status, COUNT(*) AS n FROM jobs WHERE status IN ('unclaimed', 'scheduled', 'done', 'failed', 'cancelled') GROUP BY kind, status",
  );
  const counts: Counts = {};
  for (const { kind, status, n } of rows) (counts[kind] ??= { waiting: 0, done: 0, failed: 0, cancelled: 0 })[STATUSES[status]] += Number(n);
  return counts;
}

/** The kept counts per kind (new jobs and waiting jobs not counted yet included), kinds with none left out. */
async function kept(): Promise<Counts> {
  const rows = await context.db.rows<{ kind: string; waiting: string; done: string; failed: string; cancelled: string }>(
    `SELECT kind, SUM(waiting) AS waiting, SUM(done) AS done, SUM(failed) AS failed, SUM(cancelled) AS cancelled FROM (
       SELECT kind, waiting_jobs AS waiting, done_jobs AS done, failed_jobs AS failed, cancelled_jobs AS cancelled FROM jobq_counters WHERE queue = 'jobs'
       UNION ALL SELECT kind, jobs, 0, 0, 0 FROM jobq_new_jobs WHERE queue = 'jobs'
       UNION ALL SELECT IFNULL(kind, ''), 1, 0, 0, 0 FROM jobs WHERE status IN ('unclaimed', 'scheduled') AND claim_token = ${UNCOUNTED_TOKEN}) AS k
     GROUP BY kind`,
  );
  const counts = (row: (typeof rows)[number]) => ({ waiting: Number(row.waiting), done: Number(row.done), failed: Number(row.failed), cancelled: Number(row.cancelled) });
  return Object.fromEntries(rows.filter((row) => Object.values(counts(row)).some((n) => n !== 0)).map((row) => [row.kind, counts(row)]));
}

async function assertKept(after: string): Promise<void> {
  assert.deepEqual(await kept(), await fullCount(), `kept counts after ${after}`);
}

/** stats() agrees with a full count of waiting jobs per kind; its stats. */
async function assertStats(after: string): Promise<QueueStats> {
  const stats = await context.queue.stats();
  const full = await fullCount();
  for (const entry of stats.byKind) assert.equal(entry.counts.unclaimed + entry.counts.scheduled, full[entry.kind ?? '']?.waiting ?? 0, `waiting of kind ${entry.kind} after ${after}`);
  return stats;
}

/** The queue's fold mark (src/queue/sql/uncounted-jobs.ts). */
const foldMark = async () => Number((await context.db.rows<{ last_id: number }>("SELECT last_id FROM jobq_fold_marks WHERE queue = 'jobs'"))[0]!.last_id);

/** Claimed jobs whose lease ran out, as if their worker had died long ago. */
const expireLeases = () => context.db.admin.query("UPDATE jobs SET run_after = NOW(6) - INTERVAL 1 SECOND WHERE status = 'claimed'");

// First in this file: before any writer of uncounted jobs has held a lease.
test('a fold reads no job where no writer of uncounted jobs held a lease since its mark moved, and counts the waiting ones of a writer that did', async () => {
  const { queue, db } = context;
  const folder = await Database.open({ settings: parseDatabaseUrl(db.url) });
  try {
    // Entries the fold read.
    const fold = async () => (await entriesReadBy(folder, () => foldUncountedJobs(folder, { name: 'jobs', quoted: quoteIdentifier('jobs') }))).read;
    for (let n = 0; n < 5; n++) await queue.enqueueMany(Array.from({ length: 1000 }, () => ({ kind: 'import' })));
    const entries = await fold();
    assert.ok(entries < 100, `read ${entries} entries for 5,000 jobs inserted counted`);
    assert.equal(await foldMark(), Number((await db.rows<{ id: number }>('SELECT MAX(id) AS id FROM jobs'))[0]!.id));
    // A writer of uncounted jobs takes a lease with its first insert: its jobs are read and counted.
    const id = await queue.enqueue({ kind: 'single' });
    await waitUntil(async () => (await db.rows('SELECT id FROM jobs WHERE id = ? AND created_at < NOW(6) - INTERVAL 1100000 MICROSECOND', [id])).length === 1, 'the insert to be a second old');
    await fold();
    assert.equal(await foldMark(), id);
    assert.equal((await db.rows(`SELECT id FROM jobs WHERE claim_token = ${UNCOUNTED_TOKEN}`)).length, 0, 'counted');
    await assertKept('folds');
    // A job another transaction holds (as a claim holds the candidates it locked and may hand back
    // untaken) stops the mark before it: the fold after counts it.
    const [first, second] = [await queue.enqueue({ kind: 'single' }), await queue.enqueue({ kind: 'single' })];
    await waitUntil(async () => (await db.rows('SELECT id FROM jobs WHERE id = ? AND created_at < NOW(6) - INTERVAL 1100000 MICROSECOND', [second])).length === 1, 'the inserts to be a second old');
    const claimer = await Database.open({ settings: parseDatabaseUrl(db.url) });
    try {
      await claimer.query('START TRANSACTION');
      await claimer.query('SELECT id FROM jobs WHERE id = ? FOR UPDATE', [first]);
      await fold();
      assert.equal(await foldMark(), id, 'the mark waits before the held job');
      await claimer.query('ROLLBACK');
    } finally {
      await claimer.close();
    }
    await fold();
    assert.equal(await foldMark(), second);
    assert.equal((await db.rows(`SELECT id FROM jobs WHERE claim_token = ${UNCOUNTED_TOKEN}`)).length, 0, 'both counted');
    await assertKept('a fold past a job another transaction held');
  } finally {
    await folder.close();
  }
  await db.admin.query('DELETE FROM jobs');
  await queue.recount();
});

test('every path that makes, moves or removes a waiting job keeps the count of waiting jobs equal to a full count, and stats() folds new jobs in', async () => {
  const { queue, db } = context;
  await queue.enqueue({ kind: 'email' });
  await queue.enqueue({ kind: 'email', key: 'order-1' });
  await queue.enqueue({ kind: 'email', key: 'order-1' });
  await queue.enqueue({ kind: 'report', delaySeconds: 3600 });
  await assertKept('enqueue, once of a key a job holds');
  await queue.enqueueMany(Array.from({ length: 1500 }, (_, n) => (n % 5 === 0 ? {} : { kind: n % 2 === 0 ? 'email' : 'report' })));
  await queue.enqueueMany([{ kind: 'sms', key: 'order-1' }, { kind: 'sms', key: 'order-2' }, { kind: 'sms', key: 'order-2' }]);
  await assertKept('enqueueMany, with keys given twice and held');

  // In the caller's transaction: counted if it commits, not if it rolls back; and on a mysql2
  // connection outside a transaction.
  const app = await mysql.createConnection(serverConnectionOptions(db.name));
  try {
    await app.query('START TRANSACTION');
    await queue.enqueue({ kind: 'email' }, { transaction: app });
    await queue.enqueueMany([{ kind: 'sms' }, { kind: 'sms', key: 'order-2' }], { transaction: app });
    await app.query('COMMIT');
    await assertKept("enqueues in the caller's transaction, committed");
    await app.query('START TRANSACTION');
    await queue.enqueueMany([{ kind: 'sms' }, { kind: 'sms' }], { transaction: app });
    await app.query('ROLLBACK');
    await assertKept("enqueues in the caller's transaction, rolled back");
    await queue.enqueue({ kind: 'sms' }, { connection: app });
    await assertKept('an enqueue on a mysql2 connection in autocommit');
  } finally {
    await app.end();
  }

  const claimed = await queue.claim({ batchSize: 40, leaseSeconds: 60 });
  await assertKept('a claim of waiting jobs');
  await queue.release(claimed, { ids: claimed.jobs.slice(0, 10).map((job) => job.id) });
  await assertKept('handing 10 jobs back');
  await queue.fail(claimed, new Error('again'), { maxAttempts: 5, retryDelayMs: 0 });
  await assertKept('retrying failed jobs');
  await expireLeases();
  const retaken = await queue.claim({ batchSize: 40, leaseSeconds: 60 });
  await expireLeases();
  await queue.claim({ batchSize: 40, leaseSeconds: 60 });
  await assertKept('claims of waiting jobs and of jobs whose lease ran out');
  assert.ok(retaken.jobs.length > 0);
  const waitingIds = (await db.rows<{ id: number }>("SELECT id FROM jobs WHERE status = 'unclaimed' AND run_after <= NOW(6) ORDER BY id LIMIT 7")).map((row) => Number(row.id));
  assert.equal((await queue.cancel(waitingIds)).cancelled.length, 7);
  await assertKept('cancelling 7 waiting jobs');

  // One row of new jobs per enqueue of more than 100 jobs, and jobs not counted yet from smaller
  // ones: stats() counts both, and folds them into the counter rows once there are many (jobs not
  // counted yet once their insert is a second old). Its first call comes while fewer than 5,000
  // jobs follow the fold mark, so that it counts them without folding any, however slowly the
  // inserts ran; the last, with more, folds them all.
  const uncounted = async () => Number((await db.rows<{ n: number }>(`SELECT COUNT(*) AS n FROM jobs WHERE claim_token = ${UNCOUNTED_TOKEN}`))[0]!.n);
  for (let n = 0; n < 11; n++) await queue.enqueueMany(Array.from({ length: 101 }, () => ({ kind: 'sms' })));
  for (let n = 0; n < 10; n++) await queue.enqueueMany(Array.from({ length: 100 }, () => ({ kind: n % 2 === 0 ? 'sms' : 'email' })));
  assert.ok((await db.rows("SELECT id FROM jobq_new_jobs WHERE queue = 'jobs'")).length > 10);
  await assertStats('enqueues of more and of fewer than 101 jobs');
  assert.ok((await uncounted()) >= 1000, 'stats() folded nothing');
  for (let n = 0; n < 50; n++) await queue.enqueueMany(Array.from({ length: 100 }, () => ({ kind: n % 2 === 0 ? 'sms' : 'email' })));
  assert.ok((await uncounted()) >= 6000);
  await waitUntil(async () => (await db.rows('SELECT id FROM jobs WHERE created_at > NOW(6) - INTERVAL 1100000 MICROSECOND LIMIT 1')).length === 0, 'the inserts to be a second old');
  const stats = await assertStats('a fold by stats()');
  assert.equal((await db.rows("SELECT id FROM jobq_new_jobs WHERE queue = 'jobs'")).length, 0, 'the rows of new jobs folded');
  assert.equal(await uncounted(), 0, 'the jobs not counted yet folded');
  await assertKept('a fold');
  assert.equal(stats.byKind.find((entry) => entry.kind === 'report')?.counts.scheduled, 1);
  await db.admin.query("UPDATE jobs SET status = 'done' WHERE kind = 'sms'");
  await queue.recount();
  await assertKept('a recount');
  await db.admin.query('DELETE FROM jobs');
  await queue.recount();
});

test('a job not counted yet whose insert committed after a fold had passed its id is left out of the waiting count until claimed, and its claim takes nothing off it', async () => {
  const { queue, db } = context;
  await queue.enqueueMany(Array.from({ length: 3 }, () => ({ kind: 'late' })));
  // As a fold that ran while the insert's statement was still open would leave it: the mark after it.
  await db.admin.query("UPDATE jobq_fold_marks SET last_id = (SELECT MAX(id) FROM jobs) WHERE queue = 'jobs'");
  const waiting = async () => (await queue.stats()).byKind.find((entry) => entry.kind === 'late')?.counts.unclaimed ?? 0;
  assert.equal(await waiting(), 0, 'left out');
  const claim = await queue.claim({ batchSize: 2, leaseSeconds: 60, kinds: ['late'] });
  assert.equal(claim.jobs.length, 2);
  await queue.release(claim, { ids: [claim.jobs[0]!.id] });
  assert.equal(await waiting(), 1, 'the job handed back counts; the one still uncounted does not');
  await queue.complete(await queue.claim({ batchSize: 10, leaseSeconds: 60, kinds: ['late'] }), {});
  await queue.complete(claim, {});
  assert.equal(await waiting(), 0, 'none below zero');
  await assertKept('claims of jobs left out');
});

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

  const [twoWaiting] = await context.db.rows<{ ids: string }>("SELECT GROUP_CONCAT(id) AS ids FROM (SELECT id FROM jobs WHERE status = 'unclaimed' ORDER BY id LIMIT 2) AS w");
  assert.equal((await queue.cancel(twoWaiting!.ids.split(',').map(Number))).cancelled.length, 2);
  await assertKept('cancelling 2 waiting jobs');
  const abandoned = await queue.claim({ batchSize: 1, leaseSeconds: 60 });
  await expireLeases();
  assert.deepEqual((await queue.cancel([abandoned.jobs[0]!.id])).cancelled, [abandoned.jobs[0]!.id], 'a job whose lease ran out is nobody\'s: cancelled at once');
  assert.equal((await queue.complete(abandoned, {})).lost, 1, 'its old claim settles nothing');
  await assertKept('cancelling a job whose lease ran out, and its old claim settling late');

  const [twoFailed] = await context.db.rows<{ ids: string }>("SELECT GROUP_CONCAT(id) AS ids FROM (SELECT id FROM jobs WHERE status = 'failed' ORDER BY id LIMIT 2) AS f");
  assert.equal(await queue.requeueFailed(twoFailed!.ids.split(',').map(Number)), 2);
  await assertKept('requeueing 2 failed jobs by id');

  // stats() reads the kept counts for waiting (scheduled included), done, failed and cancelled, and counts the rest.
  const [byStatus] = await context.db.rows<Record<string, number>>(
    "SELECT SUM(status = 'unclaimed') AS unclaimed, SUM(status = 'claimed') AS claimed, SUM(status = 'done') AS done, SUM(status = 'failed') AS failed, SUM(status = 'cancelled') AS cancelled, SUM(status = 'scheduled') AS scheduled FROM jobs",
  );
  const stats = await queue.stats();
  assert.deepEqual(stats.counts, Object.fromEntries(Object.entries(byStatus!).map(([status, n]) => [status, Number(n)])));
  const full = await fullCount();
  for (const entry of stats.byKind) {
    assert.deepEqual({ waiting: entry.counts.unclaimed + entry.counts.scheduled, done: entry.counts.done, failed: entry.counts.failed, cancelled: entry.counts.cancelled }, full[entry.kind ?? ''] ?? { waiting: 0, done: 0, failed: 0, cancelled: 0 }, `stats of kind ${entry.kind}`);
  }

  assert.ok((await queue.requeueFailed()) > 0);
  await assertKept('requeueing every failed job');

  await new Promise((resolve) => setTimeout(resolve, 20));
  const pruned = await queue.prune({ doneOlderThan: 0.01 });
  assert.ok(pruned.done > 0);
  await assertKept('pruning done jobs');
  assert.deepEqual(
    Object.values(await kept()).filter((counts) => counts.done !== 0 || counts.failed !== 0),
    [],
    'nothing done or failed is left',
  );
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
  // A job that enqueue neither listed nor counted (as an older jobq did not) counts under its kind after a recount.
  await queue.enqueueMany(Array.from({ length: 101 }, () => ({ kind: 'unlisted' })));
  await db.admin.query("DELETE FROM jobq_counters WHERE kind = 'unlisted'");
  await db.admin.query("DELETE FROM jobq_new_jobs WHERE kind = 'unlisted'");
  assert.equal((await queue.stats()).byKind.find((entry) => entry.kind === 'unlisted'), undefined);
  await queue.recount();
  assert.equal((await queue.stats()).byKind.find((entry) => entry.kind === 'unlisted')?.counts.unclaimed, 101);
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
      for (const counts of Object.values(await kept())) lowest = Math.min(lowest, counts.waiting, counts.done, counts.failed);
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
  const finished = { waiting: 0, done: 900, failed: 100, cancelled: 0 };
  assert.deepEqual(full, { email: finished, report: finished, sms: finished });
  assert.deepEqual(await kept(), full);
  assert.equal(lowest, 0, 'no kept count went below zero');
});

test('4 `jobq work` processes drain 50,000 jobs while 2 producers enqueue 2,000 more one at a time: the counts never go below zero, the workers fold the new ones, and they end equal to a full count', async () => {
  const { queue, db } = context;
  await db.admin.query('DELETE FROM jobs');
  await queue.recount();
  for (let n = 0; n < 50; n++) await queue.enqueueMany(Array.from({ length: 1000 }, (_, i) => ({ kind: i % 2 === 0 ? 'email' : 'report' })));
  const env = { ...process.env, JOBQ_DATABASE_URL: db.url };
  const workers = Array.from({ length: 4 }, () =>
    startCli(['work', '--handler', ONE_MS, '--keep-done', '--concurrency', '20', '--batch-size', '50', '--database-url', db.url], { JOBQ_DATABASE_URL: db.url }),
  );
  const producers = ['email', 'sms'].map((kind) => promisify(execFile)(process.execPath, [PRODUCER, '1000', kind], { env }));
  let lowest = 0;
  let samples = 0;
  const finished = async () => Number((await db.rows<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE status = 'done'"))[0]!.n) === 52_000;
  let drained = false;
  const sampling = (async () => {
    while (!drained) {
      for (const counts of Object.values(await kept())) lowest = Math.min(lowest, counts.waiting, counts.done, counts.failed);
      samples++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  await Promise.all(producers);
  await waitUntil(finished, 'the workers to finish all 52,000 jobs', { timeoutMs: 120_000 });
  // The workers fold the rows of new jobs (one per enqueue of many jobs) into the counter rows, and
  // move the fold mark past the jobs the producers put in uncounted.
  await waitUntil(async () => (await db.rows("SELECT id FROM jobq_new_jobs WHERE queue = 'jobs' LIMIT 1")).length === 0, 'the workers to fold the new jobs');
  const [{ max_id: last }] = await db.rows<{ max_id: number }>('SELECT MAX(id) AS max_id FROM jobs');
  await waitUntil(async () => (await foldMark()) >= Number(last), 'the workers to fold the jobs not counted yet');
  drained = true;
  await sampling;
  for (const worker of workers) worker.kill('SIGTERM');
  for (const worker of workers) assert.equal((await worker.done).code, 0);
  const full = await fullCount();
  assert.deepEqual(full, { email: { waiting: 0, done: 26_000, failed: 0, cancelled: 0 }, report: { waiting: 0, done: 25_000, failed: 0, cancelled: 0 }, sms: { waiting: 0, done: 1000, failed: 0, cancelled: 0 } });
  assert.deepEqual(await kept(), full);
  assert.ok(samples > 10, `${samples} samples`);
  assert.equal(lowest, 0, 'no kept count went below zero');
});
