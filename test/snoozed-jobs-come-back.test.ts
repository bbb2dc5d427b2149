import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { JobSnoozed, type Job } from '../src/index.js';
import { queueForTests } from './helpers/queue-fixtures.js';
import { startCli } from './helpers/run-cli.js';
import { mostAtOnce, type Run } from './helpers/timed-runs.js';
import { waitUntil } from './helpers/wait.js';

// A handler that calls job.snooze(seconds), or throws what it returns, puts its job off: it comes
// back that much later with its attempt given back, up to the worker's maxSnoozes; then it fails.

const SNOOZING = fileURLToPath(new URL('../../test/fixtures/snoozing-handler.mjs', import.meta.url));
const context = queueForTests();

const rowOf = async (id: number) =>
  (await context.db.rows<{ status: string; attempts: number; snoozes: number; last_error: string | null }>('SELECT status, attempts, snoozes, last_error FROM jobs WHERE id = ?', [id]))[0];

test('a job snoozed 3 times (by a call, and by a throw) runs a 4th time with its attempts unchanged, each time after its snooze', async () => {
  const { queue } = context;
  const id = await queue.enqueue({ kind: 'poll' });
  const runs: Array<{ attempts: number; at: number }> = [];
  const snoozed: number[] = [];
  const worker = queue.work(
    {
      poll: async (job: Job) => {
        runs.push({ attempts: job.attempts, at: performance.now() });
        if (runs.length === 1) job.snooze(0.3);
        else if (runs.length === 2) throw job.snooze(0);
        else if (runs.length === 3) throw new JobSnoozed(0.1);
      },
    },
    { keepDone: true },
  );
  worker.on('snoozed', (_job, info) => snoozed.push(info.seconds));
  try {
    await waitUntil(() => worker.counters.completed === 1, 'the job to be done');
  } finally {
    await worker.stop();
  }
  assert.deepEqual(runs.map((run) => run.attempts), [1, 1, 1, 1], 'no attempt spent');
  assert.deepEqual(snoozed, [0.3, 0, 0.1]);
  assert.ok(runs[1]!.at - runs[0]!.at >= 290, `the second run came ${runs[1]!.at - runs[0]!.at} ms after the first`);
  assert.deepEqual([worker.counters.snoozed, worker.counters.retried, worker.counters.failed], [3, 0, 0]);
  assert.deepEqual(await rowOf(id), { status: 'done', attempts: 1, snoozes: 3, last_error: null });
  const stats = await queue.stats();
  assert.equal(stats.counts.unclaimed, 0, 'the waiting count came back to 0');
});

test('a job snoozed more than maxSnoozes times fails with an error that says so; a bad snooze fails the run like any error', async () => {
  const { queue } = context;
  const always = await queue.enqueue({ kind: 'always' });
  const bad = await queue.enqueue({ kind: 'bad' });
  const failed = new Map<number, { message: string; final: boolean }>();
  const worker = queue.work(
    {
      always: (job: Job) => job.snooze(0),
      bad: (job: Job) => job.snooze(-1),
    },
    { maxSnoozes: 2, maxAttempts: 1 },
  );
  worker.on('failed', (job, error, info) => failed.set(job.id, { message: (error as Error).message, final: info.final }));
  try {
    await waitUntil(() => failed.size === 2, 'both jobs to fail');
  } finally {
    await worker.stop();
  }
  assert.deepEqual(failed.get(always), { message: 'snoozed 2 times, the most maxSnoozes allows', final: true });
  assert.deepEqual(await rowOf(always), { status: 'failed', attempts: 1, snoozes: 2, last_error: 'snoozed 2 times, the most maxSnoozes allows' });
  assert.deepEqual(failed.get(bad), { message: 'job.snooze takes a number of seconds from 0 to 315360000, not -1', final: true });
  assert.throws(() => queue.work(() => undefined, { maxSnoozes: -1 }), /^JobqError: maxSnoozes must be a whole number from 0 to 32767, not -1$/);
});

test('3 `jobq work` processes, 60 jobs each snoozed twice: every job runs 3 times, never two runs of one job at once, and ends done with 1 attempt', async () => {
  const { queue, db } = context;
  await db.admin.query('CREATE TABLE snooze_runs (run BIGINT AUTO_INCREMENT PRIMARY KEY, job_id BIGINT NOT NULL, attempts INT NOT NULL, pid INT NOT NULL, started TIMESTAMP(6) NOT NULL, ended TIMESTAMP(6) NULL)');
  const { firstId, lastId } = await queue.enqueueMany(Array.from({ length: 60 }, () => ({ kind: 'nap' })));
  // Not --once, which exits while every job waits out its snooze: stopped once every job is done.
  // Batches of 5: the worker up first holds at most 20 jobs, and the others get the rest.
  const workers = Array.from({ length: 3 }, () => startCli(['work', '--handler', SNOOZING, '--kind', 'nap', '--keep-done', '--max-snoozes', '2', '--batch-size', '5', '--database-url', db.url], { JOBQ_DATABASE_URL: db.url }));
  await waitUntil(async () => (await db.rows("SELECT id FROM jobs WHERE kind = 'nap' AND status <> 'done' LIMIT 1")).length === 0, 'every job to be done');
  for (const worker of workers) worker.kill('SIGTERM');
  for (const worker of workers) assert.equal((await worker.done).code, 0);
  const runs = await db.rows<Run & { attempts: number }>('SELECT job_id, pid, attempts, started, ended FROM snooze_runs ORDER BY run');
  const byJob = new Map<number, typeof runs>();
  for (const run of runs) byJob.set(Number(run.job_id), [...(byJob.get(Number(run.job_id)) ?? []), run]);
  assert.deepEqual([...byJob.keys()].sort((a, b) => a - b), Array.from({ length: 60 }, (_, n) => firstId! + n));
  assert.equal(lastId, firstId! + 59);
  for (const [id, each] of byJob) {
    assert.equal(each.length, 3, `job ${id} ran ${each.length} times`);
    assert.equal(mostAtOnce(each), 1, `runs of job ${id} overlapped`);
    assert.deepEqual(each.map((run) => run.attempts), [1, 1, 1], `attempts of job ${id}`);
  }
  assert.ok(new Set(runs.map((run) => run.pid)).size > 1, 'in several processes');
  const [ends] = await db.rows<{ done: number; attempts: number; snoozes: number }>("SELECT COUNT(*) AS done, MAX(attempts) AS attempts, MIN(snoozes) AS snoozes FROM jobs WHERE kind = 'nap' AND status = 'done' AND snoozes = 2");
  assert.deepEqual([Number(ends!.done), Number(ends!.attempts), Number(ends!.snoozes)], [60, 1, 2]);
});
