import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import mysql from 'mysql2/promise';
import { JobQueue } from '../src/index.js';
import { createTestDatabase, serverConnectionOptions, type TestDatabase } from './helpers/test-database.js';
import { runCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

let db: TestDatabase;
let first: JobQueue;
let second: JobQueue;
before(async () => {
  db = await createTestDatabase();
  first = await JobQueue.open({ url: db.url });
  second = await JobQueue.open({ url: db.url });
  await first.setup();
});
after(async () => {
  await first.close();
  await second.close();
  await db.drop();
});

/** Waits until the server's clock has passed `until` (a lease's end, as the server reads it). */
async function serverClockPasses(until: string): Promise<void> {
  await waitUntil(async () => (await db.rows<{ past: number }>('SELECT NOW(6) > ? AS past', [until]))[0]!.past === 1, `the server's clock passes ${until}`, { everyMs: 20 });
}

/** The latest end of a lease held on the table, as the server's DATETIME(6) text. */
async function latestLeaseEnd(): Promise<string> {
  return (await db.rows<{ until: string }>("SELECT CAST(MAX(run_after) AS CHAR) AS until FROM jobs WHERE status = 'claimed'"))[0]!.until;
}

test('a job is not handed out again while its lease runs', async () => {
  await first.enqueueMany([{ key: 'held' }]);
  const held = await first.claim({ batchSize: 10, leaseSeconds: 30 });
  assert.equal(held.jobs.length, 1);
  const other = await second.claim({ batchSize: 10, leaseSeconds: 30 });
  assert.equal(other.jobs.length, 0, 'a leased job is not a candidate');
  assert.deepEqual(await first.complete(held), { settled: 1, lost: 0 });
});

test('after its lease a job is claimed again, and the first owner can no longer delete it', async () => {
  await first.enqueueMany([{ key: 'a' }, { key: 'b' }]);
  const expired = await first.claim({ batchSize: 10, leaseSeconds: 1, ownerId: 1 });
  assert.equal(expired.jobs.length, 2);
  await serverClockPasses(await latestLeaseEnd());
  // One at a time: a job whose lease ran out may be what stopped its worker.
  const retaken = [await second.claim({ batchSize: 10, leaseSeconds: 30, ownerId: 2 }), await second.claim({ batchSize: 10, leaseSeconds: 30, ownerId: 2 })];
  assert.deepEqual(retaken.map((claim) => claim.jobs.map((job) => job.id)), expired.jobs.map((job) => [job.id]));
  assert.deepEqual(
    retaken.map((claim) => claim.jobs.map((job) => [job.attempts, job.leaseExpiries])),
    [[[1, 1]], [[1, 1]]],
    'a run whose lease ran out counts a lease expiry, not an attempt',
  );

  assert.deepEqual(await first.complete(expired), { settled: 0, lost: 2 }, 'the late consumer deletes nothing');
  const rows = await db.rows<{ status: string; owner_id: number }>('SELECT status, owner_id FROM jobs');
  assert.deepEqual(rows.map((row) => [row.status, row.owner_id]), [['claimed', 2], ['claimed', 2]]);
  for (const claim of retaken) assert.deepEqual(await second.complete(claim), { settled: 1, lost: 0 });
  assert.equal((await db.rows('SELECT id FROM jobs')).length, 0);
});

test('a worker frozen in the middle of a claim keeps its lane locked: another claim still takes the expired leases of that lane', async () => {
  await first.enqueueMany([{ key: 'in-a-frozen-lane' }]);
  const expired = await first.claim({ batchSize: 1, leaseSeconds: 1 });
  const [job] = expired.jobs;
  // The lane row of the job's lane, locked by an open transaction as a frozen worker's claim holds it.
  const frozen = await mysql.createConnection(serverConnectionOptions(db.name));
  try {
    const [[{ lanes }]] = (await frozen.query("SELECT COUNT(*) AS lanes FROM jobq_lanes WHERE queue = 'jobs'")) as unknown as [[{ lanes: number }]];
    const [[{ lane }]] = (await frozen.query('SELECT (? DIV @@auto_increment_increment) MOD ? AS lane', [job!.id, Number(lanes)])) as unknown as [[{ lane: number }]];
    await frozen.query('START TRANSACTION');
    await frozen.query("SELECT lane FROM jobq_lanes WHERE queue = 'jobs' AND lane = ? FOR UPDATE", [lane]);
    await serverClockPasses(await latestLeaseEnd());
    let retaken: number[] = [];
    await waitUntil(async () => (retaken = (await second.claim({ batchSize: 1, leaseSeconds: 30 })).jobs.map((claimed) => claimed.id)).length > 0, 'another claim takes the expired job', { timeoutMs: 5000, everyMs: 20 });
    assert.deepEqual(retaken, [job!.id]);
  } finally {
    await frozen.query('ROLLBACK');
    await frozen.end();
  }
  await db.admin.query('DELETE FROM jobs');
});

test('a job whose lease runs out 3 times in a row goes to failed with an error that says so; its attempt is not spent; requeue-failed brings it back', async () => {
  await first.enqueueMany([{ key: 'doomed' }]);
  for (let expiries = 0; expiries < 3; expiries++) {
    const claim = await first.claim({ batchSize: 2, leaseSeconds: 1 });
    assert.deepEqual(claim.jobs.map((job) => [job.attempts, job.leaseExpiries]), [[1, expiries]]);
    await serverClockPasses(await latestLeaseEnd());
  }
  const last = await first.claim({ batchSize: 2, leaseSeconds: 1 });
  assert.deepEqual([last.jobs.length, last.failedIds.length], [0, 1]);
  const rows = await db.rows<{ status: string; attempts: number; lease_expiries: number; last_error: string }>('SELECT status, attempts, lease_expiries, last_error FROM jobs');
  assert.deepEqual(rows.map((row) => [row.status, row.attempts, row.lease_expiries]), [['failed', 1, 3]]);
  assert.match(rows[0]!.last_error, /^its lease ran out 3 times in a row without a worker settling it/);
  assert.equal((await first.claim({ batchSize: 1 })).jobs.length, 0, 'failed jobs are never claimed');

  const stats = await runCli(['stats', '--json', '--database-url', db.url]);
  assert.equal(JSON.parse(stats.stdout).counts.failed, 1);
  const requeue = await runCli(['requeue-failed', '--database-url', db.url]);
  assert.equal(requeue.code, 0, requeue.stderr);
  assert.equal(requeue.stdout, 'requeued 1 failed job\n');
  const again = await first.claim({ batchSize: 2 });
  assert.deepEqual(again.jobs.map((job) => [job.attempts, job.leaseExpiries]), [[1, 0]], 'attempts and lease expiries start over');
  await first.complete(again);
});

test('a slow consumer keeps its jobs by extending the lease', async () => {
  await first.enqueueMany([{ key: 'slow' }]);
  const claim = await first.claim({ batchSize: 1, leaseSeconds: 1 });
  const firstLeaseEnd = await latestLeaseEnd();
  assert.equal(await first.extendLease(claim, 3), 1);
  await serverClockPasses(firstLeaseEnd);
  assert.equal((await second.claim({ batchSize: 1 })).jobs.length, 0, 'the extended lease still holds past the first one');
  assert.deepEqual(await first.complete(claim), { settled: 1, lost: 0 });
});

test('a lease length out of range is refused by claim() and extendLease() as by queue.work: one line, nothing claimed', async () => {
  await first.enqueueMany([{ key: 'lease-check' }]);
  for (const leaseSeconds of [-10, 0, 0.2, Number.NaN, 1e12]) {
    await assert.rejects(first.claim({ batchSize: 1, leaseSeconds }), { name: 'JobqError', message: `leaseSeconds must be a number of seconds from 1 to 86400, not ${JSON.stringify(leaseSeconds)}` });
    assert.throws(() => first.work(async () => undefined, { leaseSeconds }), { name: 'JobqError', message: `leaseSeconds must be a number of seconds from 1 to 86400, not ${JSON.stringify(leaseSeconds)}` });
  }
  assert.deepEqual(await db.rows("SELECT status FROM jobs WHERE job_key = 'lease-check'"), [{ status: 'unclaimed' }]);
  const claim = await first.claim({ batchSize: 1, leaseSeconds: 30 });
  await assert.rejects(first.extendLease(claim, 0), { name: 'JobqError' });
  assert.equal(await first.extendLease(claim, 30), 1);
  await first.complete(claim);
});
