import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { JobTimeoutError, type Job } from '../src/index.js';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';

// A handler that hangs holds its slot and renews its lease forever, unless the worker has a
// timeout: then the handler's signal fires, the run fails with "timed out after N ms", and a
// handler that ignores the signal is given up on (its slot freed) a second later.

const HANGING = fileURLToPath(new URL('../../test/fixtures/hanging-handler.mjs', import.meta.url));
const context = queueForTests();

const rowOf = async (id: number) =>
  (await context.db.rows<{ status: string; attempts: number; last_error: string | null }>('SELECT status, attempts, last_error FROM jobs WHERE id = ?', [id]))[0];

test('a handler that never returns and ignores its signal, with timeoutMs 200: retried, then failed with the timeout error, while the worker runs other jobs meanwhile', async () => {
  const { queue } = context;
  const hung = await queue.enqueue({ kind: 'hang' });
  await queue.enqueueMany(Array.from({ length: 20 }, () => ({ kind: 'quick', delaySeconds: 0.3 })));
  const quickDone: number[] = [];
  const failures: Array<{ at: number; message: string; final: boolean; signalled: boolean }> = [];
  let signal: AbortSignal | undefined;
  const started = Date.now();
  const worker = queue.work(
    {
      hang: (job: Job) => {
        signal = job.signal;
        return new Promise(() => {});
      },
      quick: async () => {
        quickDone.push(Date.now() - started);
      },
    },
    { concurrency: 2, timeoutMs: { hang: 200 }, maxAttempts: 2, retryDelayMs: 0, keepDone: true },
  );
  worker.on('failed', (job, error, info) => {
    if (job.id !== hung) return;
    assert.ok(error instanceof JobTimeoutError && error.timeoutMs === 200);
    failures.push({ at: Date.now() - started, message: error.message, final: info.final, signalled: signal?.aborted === true && signal.reason === error });
  });
  try {
    await waitFor(() => failures.length === 2 && quickDone.length === 20, 'the hung job to fail twice and the quick ones to finish');
  } finally {
    await worker.stop();
  }
  assert.deepEqual(
    failures.map(({ message, final, signalled }) => ({ message, final, signalled })),
    [
      { message: 'timed out after 200 ms', final: false, signalled: true },
      { message: 'timed out after 200 ms', final: true, signalled: true },
    ],
  );
  // Each run is given up on a second after its signal fired: 1.2 s, then again after the retry.
  assert.ok(failures[0]!.at >= 1200, `first given up on at ${failures[0]!.at} ms`);
  assert.ok(Math.max(...quickDone) < failures[1]!.at, `the quick jobs ran while the hung one held a slot (the last at ${Math.max(...quickDone)} ms)`);
  assert.deepEqual(await rowOf(hung), { status: 'failed', attempts: 2, last_error: 'timed out after 200 ms' });
});

test('a handler that stops at its signal fails at once with the timeout error; one that returns before it is given up on is done; kinds without a timeout run as long as they take', async () => {
  const { queue } = context;
  const obedient = await queue.enqueue({ kind: 'obedient' });
  const late = await queue.enqueue({ kind: 'late' });
  const unbounded = await queue.enqueue({ kind: 'unbounded' });
  const ended = new Map<number, { ok: boolean; message?: string; durationMs: number }>();
  const worker = queue.work(
    {
      obedient: (job: Job) => new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason))),
      late: () => sleep(400),
      unbounded: () => sleep(400),
    },
    { concurrency: 3, timeoutMs: { obedient: 100, late: 100 }, maxAttempts: 1, keepDone: true },
  );
  worker.on('completed', (job, _result, info) => ended.set(job.id, { ok: true, durationMs: info.durationMs }));
  worker.on('failed', (job, error, info) => ended.set(job.id, { ok: false, message: (error as Error).message, durationMs: info.durationMs }));
  try {
    await waitFor(() => ended.size === 3, 'the three jobs to end');
  } finally {
    await worker.stop();
  }
  assert.equal(ended.get(obedient)!.message, 'timed out after 100 ms');
  assert.ok(ended.get(obedient)!.durationMs < 900, `the obedient handler ended ${ended.get(obedient)!.durationMs} ms in`);
  assert.deepEqual([ended.get(late)!.ok, ended.get(unbounded)!.ok], [true, true]);
  assert.deepEqual((await rowOf(obedient))!.status, 'failed');
  assert.deepEqual([(await rowOf(late))!.status, (await rowOf(unbounded))!.status], ['done', 'done']);
});

test("a job's own timeoutMs, from enqueue or `jobq enqueue --timeout`, holds over the worker's, in a worker with none and in one with a shorter one", async () => {
  const { queue, db } = context;
  const own = await queue.enqueue({ kind: 'hang', timeoutMs: 150 });
  const cli = await runCli(['enqueue', '--kind', 'hang', '--timeout', '250ms', '--database-url', db.url]);
  const fromCli = Number(/\(id (\d+)\)/.exec(cli.stdout)?.[1]);
  const generous = await queue.enqueue({ kind: 'quick', timeoutMs: 5000 });
  const failed = new Map<number, string>();
  const worker = queue.work(
    { hang: (job: Job) => new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason))), quick: () => sleep(300) },
    { concurrency: 3, timeoutMs: { quick: 50 }, maxAttempts: 1, keepDone: true },
  );
  worker.on('failed', (job, error) => failed.set(job.id, (error as Error).message));
  try {
    await waitFor(() => failed.size === 2, 'the two hung jobs to fail');
    await waitFor(() => worker.counters.completed === 1, 'the job with a longer timeout than its kind to finish');
  } finally {
    await worker.stop();
  }
  assert.deepEqual(Object.fromEntries(failed), { [own]: 'timed out after 150 ms', [fromCli]: 'timed out after 250 ms' });
  assert.equal((await rowOf(generous))!.status, 'done');

  const refused = await runCli(['enqueue', '--kind', 'hang', '--timeout', 'soon', '--database-url', db.url]);
  assert.deepEqual([refused.code, refused.stderr.split('\n')[0]], [2, "error: option '--timeout <duration>' argument 'soon' is invalid. --timeout must be a length of time like 90s, 15m, 12h, 7d or 2w, not \"soon\"."]);
  await assert.rejects(queue.enqueue({ kind: 'hang', timeoutMs: 0 }), /^JobqError: job: timeoutMs must be a whole number from 1 to 2147483647, not 0$/);
});

test('`jobq work --timeout`: a hung job fails with the timeout and --once still exits; a bad timeout is one line and exit 2', async () => {
  const { queue, db } = context;
  const hung = await queue.enqueue({ kind: 'hang' });
  const quick = await queue.enqueue({ kind: 'quick' });
  const run = await runCli(['work', '--handler', HANGING, '--kind', 'hang', 'quick', '--timeout', '300ms', '--max-attempts', '1', '--keep-done', '--once', '--database-url', db.url]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(await rowOf(hung), { status: 'failed', attempts: 1, last_error: 'timed out after 300 ms' });
  assert.equal((await rowOf(quick))!.status, 'done');
  for (const bad of ['0', 'soon', 'hang=']) {
    const refused = await runCli(['work', '--handler', HANGING, '--timeout', bad, '--once', '--database-url', db.url]);
    assert.equal(refused.code, 2, `--timeout ${bad}`);
    assert.match(refused.stderr, /^error: option '--timeout <\[kind=\]duration\.\.\.>' argument '.*' is invalid\. expected \[kind=\]duration, like 30s, 500ms or email=2m/);
    assert.doesNotMatch(refused.stderr, /^\s+at /m, 'no stack trace');
  }
});

/** Waits until `condition` holds (checked every 20 ms), at most 15 s. */
async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
