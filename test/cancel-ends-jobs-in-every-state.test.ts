import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { Job } from '../src/index.js';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli, startCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

const HANDLER = fileURLToPath(new URL('../../test/fixtures/cancellable-handler.mjs', import.meta.url));
const context = queueForTests();

const statusOf = async (id: number) => (await context.db.rows<{ status: string }>('SELECT status FROM jobs WHERE id = ?', [id]))[0]?.status;

test('cancel: waiting, delayed and failed jobs end cancelled and free their keys; a claimed one is marked for its worker; done and unknown ids are reported', async () => {
  const { queue, db } = context;
  const running = await queue.enqueue({ kind: 'k' });
  const claim = await queue.claim({ batchSize: 1, ownerId: 4242 });
  assert.deepEqual(claim.jobs.map((job) => job.id), [running]);
  const waiting = await queue.enqueue({ kind: 'k', key: 'nightly' });
  const delayed = await queue.enqueue({ kind: 'k', delaySeconds: 3600 });
  const failed = await queue.enqueue({ kind: 'k' });
  await db.admin.query(`UPDATE \`${db.name}\`.jobs SET status = 'failed' WHERE id = ?`, [failed]);

  const result = await queue.cancel([waiting, delayed, failed, running, 999_999]);
  assert.deepEqual(result, { cancelled: [waiting, delayed, failed], cancelling: [{ id: running, ownerId: 4242 }], done: [], unknown: [999_999] });
  const rows = await db.rows<{ id: number; status: string; marked: number }>('SELECT id, status, cancel_requested_at IS NOT NULL AS marked FROM jobs ORDER BY id');
  assert.deepEqual(
    rows.map((r) => [Number(r.id), r.status, Number(r.marked)]),
    [[running, 'claimed', 1], [waiting, 'cancelled', 1], [delayed, 'cancelled', 1], [failed, 'cancelled', 1]],
  );
  assert.notEqual(await queue.enqueue({ kind: 'k', key: 'nightly' }), waiting, 'the key of a cancelled job may be queued again');
  assert.deepEqual(await queue.cancel([waiting]), { cancelled: [waiting], cancelling: [], done: [], unknown: [] }, 'cancelling again changes nothing');

  assert.deepEqual(await queue.complete(claim, { keepDone: true }), { settled: 1, lost: 0 }, 'a job that finishes before its worker sees the cancel is done');
  assert.deepEqual((await queue.cancel([running])).done, [running]);
  const stats = await queue.stats();
  assert.equal(stats.counts.cancelled, 3);
  assert.equal(stats.byKind.find((entry) => entry.kind === 'k')!.counts.cancelled, 3);
});

test('a job marked while a run of it failed is cancelled by the worker that claims it next, without running', async () => {
  const { queue } = context;
  const id = await queue.enqueue({ kind: 'retry-me' });
  const claim = await queue.claim({ batchSize: 1, kinds: ['retry-me'] });
  assert.equal((await queue.cancel([id])).cancelling.length, 1);
  await queue.fail(claim, new Error('boom'), { maxAttempts: 5, retryDelayMs: 0 });
  assert.equal(await statusOf(id), 'unclaimed', 'the failed run sent it back before any worker saw the mark');
  const ran: number[] = [];
  const cancelled: number[] = [];
  const worker = queue.work({ 'retry-me': (job: Job) => void ran.push(job.id) });
  worker.on('cancelled', (job) => cancelled.push(job.id));
  try {
    await waitUntil(async () => (await statusOf(id)) === 'cancelled', 'the job is cancelled');
  } finally {
    await worker.stop();
  }
  assert.deepEqual([ran, cancelled, worker.counters.cancelled], [[], [id], 1]);
});

test('jobq cancel of jobs running in 2 `jobq work` processes: every handler signal fires within 2 s, the jobs end cancelled and never run again, a handler that ignores it is given up on, the slots are freed', async (t) => {
  const { queue, db } = context;
  const log = path.join(tmpdir(), `jobq-cancel-${process.pid}-${Date.now()}.log`);
  writeFileSync(log, '');
  t.after(() => rmSync(log, { force: true }));
  const events = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' '))
      .map(([event, id, at, reason]) => ({ event: event!, id: Number(id), at: Number(at), reason }));
  const ids: number[] = [];
  for (const kind of ['long', 'long', 'long', 'long', 'stubborn', 'stubborn']) ids.push(await queue.enqueue({ kind }));
  // One process runs the 4 long jobs, the other the 2 stubborn ones in all of its 2 slots, then the quick ones.
  const workers = [
    ['--kind', 'long', '--concurrency', '4'],
    ['--kind', 'stubborn', 'quick', '--concurrency', '2'],
  ].map((args) => startCli(['work', '--handler', HANDLER, ...args, '--keep-results', '--database-url', db.url], { JOBQ_TEST_LOG: log }));
  try {
    await waitUntil(() => events().filter((e) => e.event === 'start').length === 6, 'all 6 jobs run', { timeoutMs: 60_000 });
    const cancel = await runCli(['cancel', '--ids', ...ids.map(String), '--database-url', db.url]);
    assert.equal(cancel.code, 0, cancel.stderr);
    assert.equal(cancel.stdout.split('\n')[0], 'cancelled 0 jobs, cancelling 6 running, 0 not');
    await waitUntil(async () => (await db.rows("SELECT 1 FROM jobs WHERE id IN (?) AND status = 'cancelled'", [ids])).length === 6, 'all 6 jobs are cancelled', { timeoutMs: 15_000 });
    // From the cancel's commit (the server's clock, this machine's), not from the start of the
    // command, whose Node.js takes seconds to start on a loaded machine.
    const marks = await db.rows<{ id: number; at: string }>('SELECT id, UNIX_TIMESTAMP(cancel_requested_at) * 1000 AS at FROM jobs WHERE id IN (?)', [ids]);
    const markedAt = new Map(marks.map((row) => [Number(row.id), Number(row.at)]));
    const aborts = events().filter((e) => e.event === 'abort');
    assert.deepEqual(aborts.map((e) => e.id).sort((a, b) => a - b), ids, 'every handler saw its signal fire');
    for (const abort of aborts) {
      assert.equal(abort.reason, 'JobCancelled');
      const after = abort.at - markedAt.get(abort.id)!;
      assert.ok(after <= 2000, `job ${abort.id}'s signal fired ${after} ms after the cancel`);
    }

    // The stubborn handlers still "run", given up on: their slots take the quick jobs.
    const { lastId } = await queue.enqueueMany(Array.from({ length: 12 }, (_, n) => ({ kind: 'quick', payload: { n } })));
    await waitUntil(async () => (await db.rows("SELECT 1 FROM jobs WHERE kind = 'quick' AND status = 'done'")).length === 12, 'the quick jobs are done', { timeoutMs: 30_000 });
    const last = lastId!;
    assert.deepEqual(await queue.waitFor(last), { n: 11 });
    assert.deepEqual(await queue.cancel([last]), { cancelled: [], cancelling: [], done: [last], unknown: [] }, 'a job that finished is reported done');
  } finally {
    for (const worker of workers) worker.kill('SIGTERM');
  }
  let said = '';
  for (const worker of workers) {
    const { code, stderr } = await worker.done;
    assert.equal(code, 0, stderr);
    said += stderr;
  }
  for (const id of ids) assert.match(said, new RegExp(`^worker 1: job ${id} cancelled$`, 'm'), 'each worker says what it cancelled');
  const starts = events().filter((e) => e.event === 'start' && ids.includes(e.id));
  assert.deepEqual(starts.map((e) => e.id).sort((a, b) => a - b), ids, 'each cancelled job ran once, never again');
  const [counts] = await db.rows<{ cancelled: number }>("SELECT COUNT(*) AS cancelled FROM jobs WHERE id IN (?) AND status = 'cancelled'", [ids]);
  assert.equal(Number(counts!.cancelled), 6, 'they stay cancelled');
});

test('jobq cancel prints a line of counts and a line per job not cancelled at once', async () => {
  const { queue, db } = context;
  const a = await queue.enqueue({ kind: 'printed' });
  const b = await queue.enqueue({ kind: 'printed' });
  const claim = await queue.claim({ batchSize: 1, ownerId: 7, kinds: ['printed'] });
  assert.deepEqual(claim.jobs.map((job) => job.id), [a]);

  const run = await runCli(['cancel', '--ids', String(a), String(b), '123456789', '--database-url', db.url]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.stdout.trimEnd().split('\n'), [
    'cancelled 1 job, cancelling 1 running, 1 not',
    `job ${a}: running (owner 7); its worker cancels it`,
    'job 123456789: no such job (never queued, or finished and deleted)',
  ]);
  await queue.complete(claim);
});
