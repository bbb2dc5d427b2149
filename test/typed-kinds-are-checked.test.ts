/**
 * The type test: this file is compiled by `tsc` in every test run (npm test builds first), so a
 * `@ts-expect-error` line that stops being an error fails the suite, and so does a typed call
 * that stops compiling. At run time it checks that typed jobs travel as typed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JobQueue, type Job } from '../src/index.js';
import { databaseForTests } from './helpers/queue-fixtures.js';

type Tasks = {
  email: { to: string; subject?: string };
  report: { day: string };
};

/** Compiled, never called: what must and must not type-check. */
export function typeChecks(queue: JobQueue<Tasks>, untyped: JobQueue): void {
  void queue.enqueue({ kind: 'email', payload: { to: 'ann@example.com' } });
  void queue.enqueue({ kind: 'report', payload: { day: '2026-11-23' }, delaySeconds: 60 });
  void queue.enqueueMany([{ kind: 'email', payload: { to: 'bob@example.com' } }]);
  // @ts-expect-error a number where the email's `to` is a string
  void queue.enqueue({ kind: 'email', payload: { to: 42 } });
  // @ts-expect-error the report payload given to an email
  void queue.enqueue({ kind: 'email', payload: { day: '2026-11-23' } });
  // @ts-expect-error a kind the queue does not know
  void queue.enqueue({ kind: 'sms', payload: { to: '+1' } });
  // @ts-expect-error a typed job needs its kind
  void queue.enqueue({ payload: { to: 'ann@example.com' } });

  queue.work({
    email: async (job) => job.payload.to.toUpperCase(),
    report: async (job) => job.payload.day.slice(0, 4),
  });
  queue.work({
    // @ts-expect-error the email handler reads a field emails do not have
    email: async (job) => job.payload.day,
  });
  // @ts-expect-error a handler for a kind the queue does not know
  queue.work({ sms: async () => undefined });
  queue.work(async (job) => {
    // One handler for every kind: the payload type follows the kind.
    if (job.kind === 'email') return job.payload.to;
    return job.payload.day;
  });
  const worker = queue.work({ email: async () => undefined });
  worker.on('completed', (job: Job<'email', Tasks['email']> | Job<'report', Tasks['report']>) => void job.kind);

  // Without a type argument, any kind and any payload, as before.
  void untyped.enqueue({ payload: [1, 2, 3] });
  void untyped.enqueue({ kind: 'anything', payload: { n: 1 } });
  untyped.work(async (job) => {
    const payload: unknown = job.payload;
    // @ts-expect-error an untyped payload is unknown: it must be checked before use
    void job.payload.anything;
    return payload;
  });
}

const db = databaseForTests();

test('a typed queue hands each handler its own kind with its payload', async () => {
  const queue = await JobQueue.open<Tasks>(db.url);
  try {
    await queue.setup();
    await queue.enqueue({ kind: 'email', payload: { to: 'ann@example.com' } });
    await queue.enqueue({ kind: 'report', payload: { day: '2026-11-23' } });
    const seen: string[] = [];
    const worker = queue.work(
      {
        email: async (job) => void seen.push(`email to ${job.payload.to}`),
        report: async (job) => void seen.push(`report for ${job.payload.day}`),
      },
      { once: true },
    );
    await worker.finished;
    assert.deepEqual(seen.sort(), ['email to ann@example.com', 'report for 2026-11-23']);
  } finally {
    await queue.close();
  }
});
