import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';

const context = queueForTests();

test('cancel: waiting, delayed and failed jobs go; a claimed one is refused with its owner; unknown ids are counted', async () => {
  const { queue, db } = context;
  const running = await queue.enqueue({ kind: 'k' });
  const claim = await queue.claim({ batchSize: 1, ownerId: 4242 });
  assert.deepEqual(claim.jobs.map((job) => job.id), [running]);
  const waiting = await queue.enqueue({ kind: 'k' });
  const delayed = await queue.enqueue({ kind: 'k', delaySeconds: 3600 });
  const failed = await queue.enqueue({ kind: 'k' });
  await db.admin.query(`UPDATE \`${db.name}\`.jobs SET status = 'failed' WHERE id = ?`, [failed]);

  const result = await queue.cancel([waiting, delayed, failed, running, 999_999]);
  assert.deepEqual(result.cancelled, [waiting, delayed, failed]);
  assert.deepEqual(result.running.map((r) => [r.id, r.ownerId]), [[running, 4242]]);
  assert.ok(result.running[0]!.leaseLeftSeconds > 50, 'the lease has most of its 60 s left');
  assert.deepEqual(result.unknown, [999_999]);
  const left = await db.rows<{ id: number; status: string }>('SELECT id, status FROM jobs');
  assert.deepEqual(left.map((r) => [Number(r.id), r.status]), [[running, 'claimed']], 'the claimed job is untouched');
  assert.deepEqual(await queue.complete(claim), { settled: 1, lost: 0 }, 'its worker still settles it');
});

test('jobq cancel: one line of counts, a line per job not cancelled, exit code 6 when a running job was left alone', async () => {
  const { queue, db } = context;
  const a = await queue.enqueue({ kind: 'k' });
  const b = await queue.enqueue({ kind: 'k' });
  const claim = await queue.claim({ batchSize: 1, ownerId: 7 });
  assert.deepEqual(claim.jobs.map((job) => job.id), [a]);

  const refused = await runCli(['cancel', '--ids', String(a), String(b), '123456789', '--database-url', db.url]);
  assert.equal(refused.code, 6, refused.stderr);
  const lines = refused.stdout.trimEnd().split('\n');
  assert.equal(lines[0], 'cancelled 1 job, 2 not');
  assert.match(lines[1]!, new RegExp(`^job ${a}: running, held by owner 7 \\(lease ends in [\\d.]+ s\\); left alone$`));
  assert.equal(lines[2], 'job 123456789: no such job (never queued, or finished and deleted)');
  assert.equal(lines.length, 3);

  const fine = await runCli(['cancel', '--ids', '123456789', '--database-url', db.url]);
  assert.equal(fine.code, 0, 'unknown ids are counted, not errors');
  assert.equal(fine.stdout.trimEnd().split('\n')[0], 'cancelled 0 jobs, 1 not');
  await queue.complete(claim);
});
