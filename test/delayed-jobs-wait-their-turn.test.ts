import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';
import { runCli } from './helpers/run-cli.js';

let db: TestDatabase;
let queue: JobQueue;
before(async () => {
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
});
after(async () => {
  await queue.close();
  await db.drop();
});

test('a delayed job is not handed out before its time, then it is', async () => {
  const queued = await runCli(['enqueue', '--kind', 'later', '--payload', '{"x": 1}', '--delay', '2', '--database-url', db.url]);
  assert.equal(queued.code, 0, queued.stderr);
  const id = Number(/^queued 1 job \(id (\d+)\)$/.exec(queued.stdout.trim())?.[1]);
  const startedAt = Date.now();

  assert.equal((await queue.claim({ batchSize: 10 })).jobs.length, 0, 'not claimable by oldest-first');
  assert.equal((await queue.claim({ batchSize: 10, kind: 'later' })).jobs.length, 0, 'not claimable by kind');
  assert.equal((await queue.claim({ batchSize: 10, pick: 'random-prefix' })).jobs.length, 0, 'not claimable by prefix');
  assert.equal((await queue.stats()).counts.unclaimed, 1);

  await sleep(Math.max(0, 2100 - (Date.now() - startedAt)));
  const claim = await queue.claim({ batchSize: 10, kind: 'later' });
  assert.deepEqual(claim.jobs.map((job) => [job.id, job.kind, job.payload]), [[id, 'later', { x: 1 }]]);
  await queue.complete(claim);
});

test('runAfter in the API delays by the time left', async () => {
  await queue.enqueue({ payload: 'soon', runAfter: new Date(Date.now() + 1000) });
  assert.equal((await queue.claim({ batchSize: 10 })).jobs.length, 0);
  await sleep(1100);
  const claim = await queue.claim({ batchSize: 10 });
  assert.deepEqual(claim.jobs.map((job) => job.payload), ['soon']);
  await queue.complete(claim);
});
