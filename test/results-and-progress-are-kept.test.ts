import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JobCancelled, JobFailed, type Job } from '../src/index.js';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

// A handler's return value is kept with its job (keepResults), what it reports with job.progress
// is stored while it runs, and queue.job / queue.waitFor / `jobq job` read them back.

const context = queueForTests();

test('waitFor resolves with the handler\'s value; an oversized or non-JSON result fails the job with a clear error; a job without one is deleted and waitFor still resolves', async () => {
  const { queue } = context;
  const sum = await queue.enqueue({ kind: 'sum', payload: { numbers: [1, 2, 3] } });
  const big = await queue.enqueue({ kind: 'big' });
  const odd = await queue.enqueue({ kind: 'odd' });
  const nothing = await queue.enqueue({ kind: 'nothing' });
  // Waiting for the job that returns nothing from before it runs: seen waiting, then gone.
  const nothingEnded = queue.waitFor(nothing, { timeoutMs: 30_000 });
  const worker = queue.work(
    {
      sum: (job: Job) => ({ total: (job.payload as { numbers: number[] }).numbers.reduce((a, b) => a + b, 0) }),
      big: () => 'x'.repeat(70_000),
      odd: () => ({ when: 10n }),
      nothing: () => undefined,
    },
    { keepResults: true, maxAttempts: 3 },
  );
  try {
    assert.deepEqual(await queue.waitFor(sum, { timeoutMs: 30_000 }), { total: 6 });
    const bigError = await queue.waitFor(big, { timeoutMs: 30_000 }).catch((error: unknown) => error);
    assert.ok(bigError instanceof JobFailed, String(bigError));
    assert.equal(bigError.message, `job ${big} failed: the result of job ${big} is 70002 bytes of JSON, over the 65536 kept: keep large data elsewhere and return where it is`);
    const oddError = await queue.waitFor(odd, { timeoutMs: 30_000 }).catch((error: unknown) => error);
    assert.match(String(oddError), new RegExp(`^JobFailed: job ${odd} failed: the result of job ${odd} is not JSON \\(Do not know how to serialize a BigInt\\)`));
    assert.equal(await nothingEnded, undefined);
  } finally {
    await worker.stop();
  }
  assert.equal((await queue.job(big))!.attempts, 1, 'a result that cannot be kept fails the job for good: running it again would not help');
  assert.equal(await queue.job(nothing), undefined, 'with keepResults alone, a job that returned nothing is deleted');
  const kept = (await queue.job(sum))!;
  assert.deepEqual([kept.status, kept.result], ['done', { total: 6 }]);
  await assert.rejects(queue.waitFor(nothing, { timeoutMs: 5000 }), /^JobqError: no job \d+: never queued, or done and deleted before waitFor saw it \(keepResults keeps jobs that return a value\)$/);
});

test('progress is stored while the job runs (the latest of many reports), the last report always; errors of every attempt are kept with their stacks; jobq job prints them', async () => {
  const { queue, db } = context;
  const id = await queue.enqueue({ kind: 'steps', payload: { file: 'a.csv' } });
  let release: () => void = () => undefined;
  const halfway = new Promise<void>((resolve) => (release = resolve));
  const worker = queue.work(
    {
      steps: async (job: Job) => {
        if (job.attempts < 3) throw new Error(`flaky ${job.attempts}`);
        for (let i = 1; i <= 500; i++) job.progress({ rows: i });
        await halfway;
        job.progress(1);
        return { rows: 500 };
      },
    },
    { keepResults: true, retryDelayMs: 1 },
  );
  try {
    await waitUntil(async () => (await queue.job(id))?.progress !== null, 'the progress shows');
    const running = (await queue.job(id))!;
    assert.equal(running.status, 'claimed');
    assert.deepEqual(running.progress, { rows: 500 }, 'the latest of 500 reports, written in one go');
    assert.equal(running.ownerId, process.pid);
    assert.ok(running.leaseLeftSeconds! > 0 && running.leaseLeftSeconds! <= 60, `lease left: ${running.leaseLeftSeconds}`);
    release();
    assert.deepEqual(await queue.waitFor(id, { timeoutMs: 30_000 }), { rows: 500 });
  } finally {
    await worker.stop();
  }
  const job = (await queue.job(id))!;
  assert.deepEqual([job.status, job.attempts, job.progress, job.result, job.group, job.payload], ['done', 3, 1, { rows: 500 }, null, { file: 'a.csv' }]);
  assert.deepEqual(job.errors.map((error) => [error.attempt, error.message]), [[1, 'flaky 1'], [2, 'flaky 2']]);
  assert.match(job.errors[0]!.stack!, /results-and-progress-are-kept\.test\.js/, 'the stack names the handler');
  assert.doesNotMatch(job.errors[0]!.stack!, /dist\/src\/worker|node:internal/, "jobq's own frames are left out");

  const printed = await runCli(['job', String(id), '--database-url', db.url]);
  assert.equal(printed.code, 0, printed.stderr);
  const lines = printed.stdout.trimEnd().split('\n');
  assert.equal(lines[0], `job ${id}`);
  assert.match(lines[1]!, /^ {2}kind: +steps$/);
  assert.match(lines[2]!, /^ {2}status: +done at \d{4}-\d\d-\d\dT[\d:.]+Z$/);
  for (const line of [/^ {2}payload: +\{"file":"a\.csv"\}$/m, /^ {2}attempts: +3$/m, /^ {2}progress: +1$/m, /^ {2}result: +\{"rows":500\}$/m]) assert.match(printed.stdout, line);
  assert.match(printed.stdout, /^ {2}errors:\n {4}attempt 1 at \S+: flaky 1\n {6}at /m);
  const json = await runCli(['job', String(id), '--json', '--database-url', db.url]);
  assert.deepEqual(JSON.parse(json.stdout).result, { rows: 500 });

  const missing = await runCli(['job', '999999999', '--database-url', db.url]);
  assert.deepEqual([missing.code, missing.stderr.trim()], [8, 'jobq: no job 999999999: never queued, or finished and deleted']);
  const bad = await runCli(['job', 'abc', '--database-url', db.url]);
  assert.equal(bad.code, 2);
});

test('job.progress refuses what is not a number or a small object with one line; waitFor rejects a cancelled job with JobCancelled', async () => {
  const { queue } = context;
  const wrong = await queue.enqueue({ kind: 'wrong' });
  const huge = await queue.enqueue({ kind: 'huge' });
  const worker = queue.work({ wrong: (job: Job) => job.progress('half' as never), huge: (job: Job) => job.progress({ text: 'y'.repeat(5000) }) }, { maxAttempts: 1, keepDone: true });
  try {
    await assert.rejects(queue.waitFor(wrong, { timeoutMs: 30_000 }), { name: 'JobFailed', message: `job ${wrong} failed: job.progress takes a number or a plain object, not "half"` });
    await assert.rejects(queue.waitFor(huge, { timeoutMs: 30_000 }), { name: 'JobFailed', message: `job ${huge} failed: the progress of job ${huge} is 5011 bytes of JSON, over the 4096 kept: keep large data elsewhere and return where it is` });
  } finally {
    await worker.stop();
  }
  const later = await queue.enqueue({ kind: 'later', delaySeconds: 3600 });
  const waiting = queue.waitFor(later, { pollMs: 50 });
  await queue.cancel([later]);
  await assert.rejects(waiting, (error: unknown) => error instanceof JobCancelled && error.jobId === later);
});
