import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

const context = queueForTests();

/** Claims (of `kinds`, if given) until one gets a job; returns that claim and when it came, in ms after `since`. */
async function firstClaimWithJobs(since: number, kinds?: string[]) {
  let claim = await context.queue.claim({ batchSize: 10, kinds });
  await waitUntil(async () => (claim = await context.queue.claim({ batchSize: 10, kinds })).jobs.length > 0, 'the delayed job is handed out', { everyMs: 20 });
  return { claim, afterMs: performance.now() - since };
}

test('a delayed job is not handed out before its time, then it is', async () => {
  const startedAt = performance.now();
  const queued = await runCli(['enqueue', '--kind', 'later', '--payload', '{"x": 1}', '--delay', '2', '--database-url', context.db.url]);
  assert.equal(queued.code, 0, queued.stderr);
  const id = Number(/^queued 1 job \(id (\d+)\)$/.exec(queued.stdout.trim())?.[1]);

  assert.equal((await context.queue.claim({ batchSize: 10 })).jobs.length, 0, 'not claimable by oldest-first');
  assert.equal((await context.queue.claim({ batchSize: 10, kinds: ['later'] })).jobs.length, 0, 'not claimable by kind');
  assert.equal((await context.queue.stats()).counts.unclaimed, 1);

  const { claim, afterMs } = await firstClaimWithJobs(startedAt, ['later']);
  assert.ok(afterMs >= 2000, `handed out ${Math.round(afterMs)} ms after the enqueue began, not after 2 s`);
  assert.deepEqual(claim.jobs.map((job) => [job.id, job.kind, job.payload]), [[id, 'later', { x: 1 }]]);
  await context.queue.complete(claim);
});

test('runAfter in the API delays by the time left', async () => {
  const startedAt = performance.now();
  await context.queue.enqueue({ payload: 'soon', runAfter: new Date(Date.now() + 1000) });
  assert.equal((await context.queue.claim({ batchSize: 10 })).jobs.length, 0);
  const { claim, afterMs } = await firstClaimWithJobs(startedAt);
  // The delay is sent as the time left (not as a time on the server's clock), rounded to the millisecond.
  assert.ok(afterMs >= 995, `handed out ${Math.round(afterMs)} ms after runAfter was set 1 s ahead`);
  assert.deepEqual(claim.jobs.map((job) => job.payload), ['soon']);
  await context.queue.complete(claim);
});
