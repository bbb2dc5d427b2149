import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { waitUntil } from './helpers/wait.js';

const context = queueForTests();

const statusCounts = async () =>
  Object.fromEntries((await context.db.rows<{ status: string; n: number }>('SELECT status, COUNT(*) AS n FROM jobs GROUP BY status')).map((r) => [r.status, Number(r.n)]));

test('stop() mid-run: running jobs finish and are settled, prefetched ones go back at once, none runs twice', async () => {
  await context.queue.enqueueMany(Array.from({ length: 300 }, (_, n) => ({ payload: { n } })));
  const handled: number[] = [];
  const worker = context.queue.work(
    async (job) => {
      await sleep(20);
      handled.push(job.id);
    },
    { concurrency: 4, batchSize: 50 },
  );
  await waitUntil(() => handled.length >= 20, '20 jobs are handled', { everyMs: 5 });
  await worker.stop();
  assert.equal(new Set(handled).size, handled.length, 'no job handled twice');
  const counts = await statusCounts();
  assert.equal(counts.claimed ?? 0, 0, 'nothing left claimed');
  assert.equal(counts.unclaimed, 300 - handled.length, 'every job not handled is waiting again');
  const [due] = await context.db.rows<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE status = 'unclaimed' AND run_after <= NOW(6)");
  assert.equal(Number(due!.n), 300 - handled.length, 'released jobs are due at once, not after their lease');
  assert.equal(worker.counters.completed, handled.length);

  // `once` picks up where it stopped and drains the rest.
  const rest = context.queue.work(async (job) => void handled.push(job.id), { once: true });
  await rest.finished;
  assert.equal(handled.length, 300);
  assert.equal(new Set(handled).size, 300, 'every job handled exactly once over both workers');
  assert.deepEqual(await statusCounts(), {});
});

test('stop({ timeoutMs }) aborts handlers that run too long; their jobs are retried later, not lost', async () => {
  await context.queue.enqueue({ kind: 'slow', payload: {} });
  let started = false;
  let aborted = false;
  const worker = context.queue.work({
    slow: (job) =>
      new Promise((_, reject) => {
        started = true;
        job.signal.addEventListener('abort', () => {
          aborted = true;
          reject(new Error('gave up'));
        });
      }),
  });
  // Claimed is not enough: a job claimed but not started is released at once, not aborted.
  await waitUntil(() => started, 'the handler runs', { everyMs: 10 });
  await worker.stop({ timeoutMs: 100 });
  assert.ok(aborted, 'the handler saw its signal fire');
  const [row] = await context.db.rows<{ status: string; last_error: string }>("SELECT status, last_error FROM jobs WHERE kind = 'slow'");
  assert.deepEqual(row, { status: 'scheduled', last_error: 'gave up' }, 'due after its retry delay');
  // Either claim loop may have read the job while the other held it: an empty claim is no fault.
  const { completed, retried, failed, deadlocks, lockWaits } = worker.counters;
  assert.deepEqual({ completed, retried, failed, deadlocks, lockWaits }, { completed: 0, retried: 1, failed: 0, deadlocks: 0, lockWaits: 0 });
  await context.db.admin.query('DELETE FROM jobs');
});
