import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';

const context = queueForTests();

test('a throwing handler is retried with growing delays, then ends failed with its error; the events say so', async () => {
  const doomed = await context.queue.enqueue({ kind: 'flaky', payload: { fail: true } });
  const fine = await context.queue.enqueue({ kind: 'flaky', payload: { fail: false } });
  const startedAt: number[] = [];
  const events: string[] = [];
  const worker = context.queue.work(
    {
      flaky: async (job) => {
        if (job.id === doomed) startedAt.push(performance.now());
        if ((job.payload as { fail: boolean }).fail) throw new Error(`boom on attempt ${job.attempts}`);
        return 'sent';
      },
    },
    { maxAttempts: 3, retryDelayMs: 200 },
  );
  worker.on('completed', (job, result) => events.push(`completed ${job.id === fine ? 'fine' : job.id} ${String(result)}`));
  worker.on('failed', (job, error, { final }) => events.push(`failed attempt ${job.attempts} ${(error as Error).message} final=${final}`));
  while (worker.counters.failed === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  await worker.stop();

  assert.equal(events.filter((e) => e.startsWith('failed')).join('\n'), [
    'failed attempt 1 boom on attempt 1 final=false',
    'failed attempt 2 boom on attempt 2 final=false',
    'failed attempt 3 boom on attempt 3 final=true',
  ].join('\n'));
  assert.ok(events.includes('completed fine sent'));
  const [first, second] = [startedAt[1]! - startedAt[0]!, startedAt[2]! - startedAt[1]!];
  assert.ok(first >= 190 && second >= 390, `retries wait 200 ms, then 400 ms (waited ${first.toFixed(0)} and ${second.toFixed(0)})`);
  const rows = await context.db.rows<{ id: number; status: string; attempts: number; last_error: string }>('SELECT id, status, attempts, last_error FROM jobs');
  assert.deepEqual(rows.map((r) => [Number(r.id), r.status, r.attempts, r.last_error]), [[doomed, 'failed', 3, 'boom on attempt 3']]);
  // Claims and empty claims vary: both claim loops may go for a retried job once it is due.
  const { completed, retried, failed } = worker.counters;
  assert.deepEqual({ completed, retried, failed }, { completed: 1, retried: 2, failed: 1 });
});
