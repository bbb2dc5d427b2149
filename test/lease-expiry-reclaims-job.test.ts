import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';
import { runCli } from './helpers/run-cli.js';

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
  await sleep(1200);
  const retaken = await second.claim({ batchSize: 10, leaseSeconds: 30, ownerId: 2 });
  assert.deepEqual(retaken.jobs.map((job) => job.id), expired.jobs.map((job) => job.id));
  assert.deepEqual(retaken.jobs.map((job) => job.attempts), [2, 2], 'each claim counts an attempt');

  assert.deepEqual(await first.complete(expired), { settled: 0, lost: 2 }, 'the late consumer deletes nothing');
  const rows = await db.rows<{ status: string; owner_id: number }>('SELECT status, owner_id FROM jobs');
  assert.deepEqual(rows.map((row) => [row.status, row.owner_id]), [['claimed', 2], ['claimed', 2]]);
  assert.deepEqual(await second.complete(retaken), { settled: 2, lost: 0 });
  assert.equal((await db.rows('SELECT id FROM jobs')).length, 0);
});

test('a job whose lease runs out 3 times in a row goes to failed with an error that says so; its attempt is not spent; requeue-failed brings it back', async () => {
  await first.enqueueMany([{ key: 'doomed' }, { key: 'bystander' }]);
  for (let expiries = 0; expiries < 3; expiries++) {
    const claim = await first.claim({ batchSize: 2, leaseSeconds: 0.2 });
    // Once its lease has run out, the job is claimed alone: it may be what crashed its worker.
    assert.deepEqual(
      claim.jobs.map((job) => [job.attempts, job.leaseExpiries]),
      expiries === 0 ? [[1, 0], [1, 0]] : [[1, expiries]],
    );
    await sleep(300);
  }
  const last = await first.claim({ batchSize: 2, leaseSeconds: 0.2 });
  assert.equal(last.failedIds.length, 2, 'both ran out three times: the bystander was taken alone after its own first expiry');
  const rows = await db.rows<{ status: string; attempts: number; lease_expiries: number; last_error: string }>('SELECT status, attempts, lease_expiries, last_error FROM jobs');
  assert.deepEqual(rows.map((row) => [row.status, row.attempts, row.lease_expiries]), [['failed', 1, 3], ['failed', 1, 3]]);
  assert.match(rows[0]!.last_error, /^its lease ran out 3 times in a row without a worker settling it/);
  assert.equal((await first.claim({ batchSize: 1 })).jobs.length, 0, 'failed jobs are never claimed');

  const stats = await runCli(['stats', '--json', '--database-url', db.url]);
  assert.equal(JSON.parse(stats.stdout).counts.failed, 2);
  const requeue = await runCli(['requeue-failed', '--database-url', db.url]);
  assert.equal(requeue.code, 0, requeue.stderr);
  assert.equal(requeue.stdout, 'requeued 2 failed jobs\n');
  const again = await first.claim({ batchSize: 2 });
  assert.deepEqual(again.jobs.map((job) => [job.attempts, job.leaseExpiries]), [[1, 0], [1, 0]], 'attempts and lease expiries start over');
  await first.complete(again);
});

test('a slow consumer keeps its jobs by extending the lease', async () => {
  await first.enqueueMany([{ key: 'slow' }]);
  const claim = await first.claim({ batchSize: 1, leaseSeconds: 1 });
  await sleep(600);
  assert.equal(await first.extendLease(claim, 1), 1);
  await sleep(600);
  assert.equal((await second.claim({ batchSize: 1 })).jobs.length, 0, 'the extended lease still holds');
  assert.deepEqual(await first.complete(claim), { settled: 1, lost: 0 });
});
