import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';

const context = queueForTests();

test('a delayed job is not handed out before its time, then it is', async () => {
  const queued = await runCli(['enqueue', '--kind', 'later', '--payload', '{"x": 1}', '--delay', '2', '--database-url', context.db.url]);
  assert.equal(queued.code, 0, queued.stderr);
  const id = Number(/^queued 1 job \(id (\d+)\)$/.exec(queued.stdout.trim())?.[1]);
  const startedAt = Date.now();

  assert.equal((await context.queue.claim({ batchSize: 10 })).jobs.length, 0, 'not claimable by oldest-first');
  assert.equal((await context.queue.claim({ batchSize: 10, kinds: ['later'] })).jobs.length, 0, 'not claimable by kind');
  assert.equal((await context.queue.stats()).counts.unclaimed, 1);

  await sleep(Math.max(0, 2100 - (Date.now() - startedAt)));
  const claim = await context.queue.claim({ batchSize: 10, kinds: ['later'] });
  assert.deepEqual(claim.jobs.map((job) => [job.id, job.kind, job.payload]), [[id, 'later', { x: 1 }]]);
  await context.queue.complete(claim);
});

test('runAfter in the API delays by the time left', async () => {
  await context.queue.enqueue({ payload: 'soon', runAfter: new Date(Date.now() + 1000) });
  assert.equal((await context.queue.claim({ batchSize: 10 })).jobs.length, 0);
  await sleep(1100);
  const claim = await context.queue.claim({ batchSize: 10 });
  assert.deepEqual(claim.jobs.map((job) => job.payload), ['soon']);
  await context.queue.complete(claim);
});
