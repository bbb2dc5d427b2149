import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { JobQueue, JobqError } from '../src/index.js';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { serverConnectionOptions } from './helpers/test-database.js';
import { mostAtOnce, timedRuns } from './helpers/timed-runs.js';
import { waitUntil } from './helpers/wait.js';

// A unique key holds while its job waits, is active or is stored: an enqueue of a held key adds
// nothing and returns the holder, from one process or from ten at once; with `replace`, the
// waiting job takes the last payload (debounce).

const context = queueForTests();
const PRODUCER = fileURLToPath(new URL('../../test/fixtures/enqueue-unique.mjs', import.meta.url));

const rowsOf = (kind: string) =>
  context.db.rows<{ id: number; status: string; payload: string | null; unique_key: string | null }>('SELECT id, status, CAST(payload AS CHAR) AS payload, unique_key FROM jobs WHERE kind = ? ORDER BY id', [kind]);

/** The kept count of waiting jobs in stats() against a count of the rows. */
async function assertWaitingCounted(what: string): Promise<void> {
  const [{ n }] = await context.db.rows<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE status IN ('unclaimed', 'scheduled')");
  const { counts } = await context.queue.stats();
  assert.equal(counts.unclaimed + counts.scheduled, Number(n), `waiting jobs counted after ${what}`);
}

test("while 'waiting', 'active' or 'stored', an enqueue of a held key returns the job holding it, and one of a free key queues a job", async () => {
  const { queue, db } = context;
  const enqueue = (scope: 'waiting' | 'active' | 'stored', payload: number) => queue.enqueue({ kind: scope, payload, unique: { key: `${scope}-key`, while: scope } });
  const claimOf = async (kind: string) => queue.claim({ batchSize: 10, leaseSeconds: 60, kinds: [kind] });

  // 'waiting': until a worker first takes the job. Retried, it is back waiting beside the new one.
  const waiting = await enqueue('waiting', 1);
  assert.equal(await enqueue('waiting', 2), waiting, 'held while it waits');
  const taken = await claimOf('waiting');
  assert.deepEqual(taken.jobs.map((job) => job.id), [waiting]);
  const next = await enqueue('waiting', 3);
  assert.notEqual(next, waiting, 'free once a worker took it');
  await queue.fail(taken, new Error('again'), { maxAttempts: 5, retryDelayMs: 0 });
  assert.equal(await enqueue('waiting', 4), next, 'held by the new job, not by the retried one');
  assert.deepEqual((await rowsOf('waiting')).map((row) => [row.id, row.status, row.payload]), [[waiting, 'unclaimed', '1'], [next, 'unclaimed', '3']]);

  // 'active': until it is done or failed, retries included.
  const active = await enqueue('active', 1);
  let running = await claimOf('active');
  assert.equal(await enqueue('active', 2), active, 'held while it runs');
  await queue.fail(running, new Error('again'), { maxAttempts: 5, retryDelayMs: 0 });
  assert.equal(await enqueue('active', 3), active, 'held while it waits for its retry');
  running = await claimOf('active');
  await queue.complete(running, { keepDone: true });
  const afterDone = await enqueue('active', 4);
  assert.notEqual(afterDone, active, 'free once done, though its row is kept');

  // A failed job whose key a newer job holds stays failed when requeued, until the key is free.
  await queue.fail(await claimOf('active'), new Error('for good'), { maxAttempts: 1 });
  const newer = await enqueue('active', 5);
  assert.notEqual(newer, afterDone, 'free once failed');
  assert.equal(await queue.requeueFailed([afterDone]), 0, 'not requeued while its key is held');
  assert.equal(await queue.requeueFailed(), 0);
  await queue.complete(await claimOf('active'));
  assert.equal(await queue.requeueFailed([afterDone]), 1, 'requeued once the key is free');
  assert.equal(await enqueue('active', 6), afterDone, 'and holds it again');

  // 'stored': while its row exists, done or failed.
  const stored = await enqueue('stored', 1);
  await queue.complete(await claimOf('stored'), { keepDone: true });
  assert.equal(await enqueue('stored', 2), stored, 'held while its done row is kept');
  await db.admin.query('DELETE FROM jobs WHERE id = ?', [stored]);
  assert.notEqual(await enqueue('stored', 3), stored, 'free once the row is gone');

  assert.equal(await queue.enqueue({ kind: 'default', unique: { key: 'default-key' } }), await queue.enqueue({ kind: 'default', unique: { key: 'default-key' } }));
  await assertWaitingCounted('enqueues of held keys');
});

test("onConflict 'replace' (debounce): the waiting job takes the new payload and delay; once a worker has it, a new job is queued", async () => {
  const { queue, db } = context;
  const debounce = (v: number, delaySeconds: number) => queue.enqueue({ kind: 'debounced', payload: { v }, delaySeconds, unique: { key: 'doc-7', onConflict: 'replace' } });
  const first = await debounce(1, 60);
  assert.equal(await debounce(2, 600), first);
  const [row] = await db.rows<{ payload: string; later: number }>('SELECT CAST(payload AS CHAR) AS payload, run_after > NOW(6) + INTERVAL 500 SECOND AS later FROM jobs WHERE id = ?', [first]);
  assert.deepEqual(JSON.parse(row!.payload), { v: 2 });
  assert.equal(Number(row!.later), 1, 'its run time moved to the new delay');

  assert.equal(await queue.runNow([first]), 1);
  const claim = await queue.claim({ batchSize: 10, leaseSeconds: 60, kinds: ['debounced'] });
  assert.deepEqual(claim.jobs.map((job) => job.payload), [{ v: 2 }]);
  const second = await debounce(3, 0);
  assert.notEqual(second, first, 'a job a worker holds is left to run, and a new one queued');
  assert.deepEqual((await rowsOf('debounced')).map((each) => [each.id, each.status, JSON.parse(each.payload!)]), [[first, 'claimed', { v: 2 }], [second, 'unclaimed', { v: 3 }]]);
  await queue.complete(claim);
  await assertWaitingCounted('debounced enqueues');
});

test('enqueueMany and enqueues in a transaction honour unique keys: a key twice in one batch queues one job, the last payload for replace; a rolled-back enqueue holds nothing', async () => {
  const { queue, db } = context;
  const result = await queue.enqueueMany([
    { kind: 'many', payload: 1, unique: { key: 'm1' } },
    { kind: 'many', payload: 2, unique: { key: 'm1' } },
    { kind: 'many', payload: 3, unique: { key: 'm2' } },
    { kind: 'many', payload: 4 },
    { kind: 'many', payload: 5, unique: { key: 'm3', onConflict: 'replace' } },
    { kind: 'many', payload: 6, unique: { key: 'm3', onConflict: 'replace' } },
  ]);
  const rows = await rowsOf('many');
  assert.deepEqual(rows.map((row) => [row.payload, row.unique_key]), [['1', 'm1'], ['3', 'm2'], ['4', null], ['6', 'm3']]);
  assert.deepEqual([result.firstId, result.lastId], [rows[0]!.id, rows.at(-1)!.id]);
  // Small batches go in uncounted, larger ones counted by their insert: both leave the held keys out.
  await queue.enqueueMany(Array.from({ length: 150 }, (_, n) => ({ kind: 'many', payload: n, unique: { key: `m${n % 5}` } })));
  assert.equal((await rowsOf('many')).length, 6, 'm0 and m4 new, the others held');
  await assertWaitingCounted('enqueueMany with held keys');

  const app = await mysql.createConnection(serverConnectionOptions(db.name));
  try {
    await app.query('START TRANSACTION');
    const rolledBack = await queue.enqueue({ kind: 'in-tx', unique: { key: 't1' } }, { transaction: app });
    await app.query('ROLLBACK');
    const kept = await queue.enqueue({ kind: 'in-tx', unique: { key: 't1' } });
    assert.notEqual(kept, rolledBack);
    await app.query('START TRANSACTION');
    assert.equal(await queue.enqueue({ kind: 'in-tx', unique: { key: 't1' } }, { transaction: app }), kept, 'held, seen from a transaction');
    const inTransaction = await queue.enqueueMany([{ kind: 'in-tx', unique: { key: 't2' } }, { kind: 'in-tx', unique: { key: 't2' } }], { transaction: app });
    await app.query('COMMIT');
    assert.equal(await queue.enqueue({ kind: 'in-tx', unique: { key: 't2' } }), inTransaction.firstId);
    assert.equal((await rowsOf('in-tx')).length, 2);
  } finally {
    await app.end();
  }
  await assertWaitingCounted('enqueues in transactions');
});

test('windowSeconds: the key holds that long from the first enqueue, whatever becomes of the job, then queues a new one; in batches and transactions too; prune deletes ended windows', async () => {
  const { queue, db } = context;
  const windowed = (payload: number, key = 'once-a-second') => queue.enqueue({ kind: 'windowed', payload, unique: { key, windowSeconds: 1 } });
  const before = performance.now();
  const first = await windowed(1);
  assert.equal(await windowed(2), first, 'held while it waits');
  await queue.complete(await queue.claim({ batchSize: 10, leaseSeconds: 60, kinds: ['windowed'] }));
  assert.deepEqual(await rowsOf('windowed'), [], 'done and deleted');
  assert.equal(await windowed(3), first, 'held after its job is gone');
  let next = first;
  await waitUntil(async () => (next = await windowed(4)) !== first, 'the window to end');
  assert.ok(performance.now() - before >= 1000, `a new job ${performance.now() - before} ms after the first enqueue`);
  assert.equal(await windowed(5), next, 'held again, for the new job');
  assert.deepEqual((await rowsOf('windowed')).map((row) => [row.id, row.payload]), [[next, '4']]);

  const many = await queue.enqueueMany([
    { kind: 'windowed', payload: 6, unique: { key: 'w-many', windowSeconds: 60 } },
    { kind: 'windowed', payload: 7, unique: { key: 'w-many', windowSeconds: 60 } },
    { kind: 'windowed', payload: 8 },
  ]);
  assert.equal(many.count, 3);
  assert.deepEqual((await rowsOf('windowed')).map((row) => row.payload), ['4', '6', '8']);

  const app = await mysql.createConnection(serverConnectionOptions(db.name));
  try {
    await app.query('START TRANSACTION');
    const rolledBack = await queue.enqueue({ kind: 'windowed', unique: { key: 'w-tx', windowSeconds: 60 } }, { transaction: app });
    await app.query('ROLLBACK');
    assert.notEqual(await queue.enqueue({ kind: 'windowed', unique: { key: 'w-tx', windowSeconds: 60 } }), rolledBack, 'a rolled-back window holds nothing');
    const outside = await queue.enqueue({ kind: 'windowed', unique: { key: 'w-own', windowSeconds: 60 } }, { connection: app });
    assert.equal(await queue.enqueue({ kind: 'windowed', unique: { key: 'w-own', windowSeconds: 60 } }), outside, 'on a connection in autocommit, in a transaction of its own');
  } finally {
    await app.end();
  }
  await assertWaitingCounted('windowed enqueues');
  await db.admin.query("UPDATE jobq_unique_windows SET until = IF(unique_key LIKE 'w-%', NOW(6) - INTERVAL 1 SECOND, NOW(6) + INTERVAL 1 HOUR)");
  assert.equal((await queue.prune({ doneOlderThan: '1d' })).windows, 3);
  assert.deepEqual((await db.rows<{ unique_key: string }>('SELECT unique_key FROM jobq_unique_windows')).map((row) => row.unique_key), ['once-a-second']);
  await db.admin.query("DELETE FROM jobs WHERE kind = 'windowed'");
  await queue.recount();
});

test('bad unique options are refused with one line, from the library and the CLI (exit 2), and nothing is queued; a partitioned table refuses unique jobs', async () => {
  const { queue, db } = context;
  const before = await db.rows('SELECT id FROM jobs');
  const refused = async (unique: unknown, message: RegExp) => {
    await assert.rejects(queue.enqueue({ kind: 'bad', unique } as never), (error: unknown) => error instanceof JobqError && message.test(error.message));
  };
  await refused({ key: 'has space' }, /^job: unique\.key must be 1-64 printable ASCII characters without spaces, not "has space"$/);
  await refused({ key: 'k', while: 'soon' }, /^job: unique\.while must be "waiting", "active" or "stored", not "soon"$/);
  await refused({ key: 'k', onConflict: 'merge' }, /^job: unique\.onConflict must be "keep" or "replace", not "merge"$/);
  await refused({ key: 'k', while: 'active', onConflict: 'replace' }, /^job: unique\.onConflict "replace" holds the key while the job waits; leave out unique\.while "active"$/);
  await refused({ key: 'k', for: 60 }, /^job: unique has no field "for"; it takes "key", "while", "onConflict", "windowSeconds"$/);
  await refused({ key: 'k', windowSeconds: 0 }, /^job: unique\.windowSeconds must be a number of seconds above 0, at most 315360000, not 0$/);
  await refused({ key: 'k', windowSeconds: 60, while: 'active' }, /^job: unique\.windowSeconds holds the key for a time, whatever becomes of the job; leave out unique\.while$/);
  await assert.rejects(queue.enqueue({ kind: 'bad', key: 'k', unique: { key: 'k' } }), /^JobqError: job: give key or unique, not both: unique\.key with while "stored" holds as key does$/);

  const cli = (args: string[], input?: string) => runCli(['enqueue', '--kind', 'bad', ...args, '--database-url', db.url], {}, input);
  for (const [args, stderr] of [
    [['--replace'], 'jobq: --replace needs --unique-key: it says what a job\'s unique key does\n'],
    [['--unique-key', 'k', '--unique-while', 'active', '--replace'], 'jobq: the job: unique.onConflict "replace" holds the key while the job waits; leave out unique.while "active"\n'],
  ] as const) {
    const run = await cli([...args]);
    assert.deepEqual([run.code, run.stderr], [2, stderr]);
  }
  const line = await cli(['--stdin'], '{"unique": {"key": "ok"}}\n{"unique": {"key": "k", "while": "later"}}\n');
  assert.deepEqual([line.code, line.stderr], [2, 'jobq: line 2: unique.while must be "waiting", "active" or "stored", not "later"; nothing was queued; nothing from line 1 on was written\n']);
  assert.deepEqual(await db.rows('SELECT id FROM jobs'), before, 'nothing queued');

  const parted = await JobQueue.open({ url: db.url, table: 'parted' });
  try {
    await parted.setup({ partitions: 2 });
    await assert.rejects(parted.enqueue({ kind: 'p', unique: { key: 'k' } }), /^JobqError: unique jobs need a table that is not partitioned, and table "parted" is; leave out unique, or run "jobq setup-tables --partitions 0"$/);
    await parted.enqueue({ kind: 'p', key: 'plain' });
  } finally {
    await parted.close();
  }
});

test('the CLI queues a unique job once and says which job holds the key; --replace debounces; --stdin lines carry "unique"', async () => {
  const { db } = context;
  const cli = (args: string[], input?: string) => runCli(['enqueue', '--kind', 'cli', ...args, '--database-url', db.url], {}, input);
  const first = await cli(['--unique-key', 'report-1']);
  const id = Number(/^queued 1 job \(id (\d+)\)\n$/.exec(first.stdout)?.[1]);
  assert.ok(id > 0, first.stdout + first.stderr);
  assert.equal((await cli(['--unique-key', 'report-1'])).stdout, `queued 0 jobs; its key was held already, by job ${id}\n`);
  const debounced = Number(/\(id (\d+)\)/.exec((await cli(['--unique-key', 'doc-1', '--replace', '--payload', '1'])).stdout)?.[1]);
  assert.equal((await cli(['--unique-key', 'doc-1', '--replace', '--payload', '2', '--delay', '30'])).stdout, `replaced the payload and run time of job ${debounced}, which waits with that unique key\n`);
  assert.deepEqual((await rowsOf('cli')).map((row) => row.payload), [null, '2']);
  const lines = await cli(['--stdin'], '{"unique": {"key": "report-1"}}\n{"unique": {"key": "report-2"}}\n{"unique": {"key": "report-2"}}\n{"payload": 9}\n');
  assert.match(lines.stdout, /^queued 2 jobs \(ids \d+\.\.\d+\); 1 line repeated the key of an earlier line, which is queued once; 1 line named a key a job held already\n$/);
  assert.equal((await rowsOf('cli')).length, 4);
});

test('10 processes enqueue unique keys 100 times each at once, a key for each way it may hold: one job each, and every process got its id; with replace, one job carrying a last payload', async () => {
  const { queue, db } = context;
  const env = { ...process.env, JOBQ_DATABASE_URL: db.url };
  const modes = ['waiting', 'active', 'stored', 'window', 'replace'];
  // Each process enqueues every key in turn; replace with a delay, so that no claim meets it.
  const got = await Promise.all(
    Array.from({ length: 10 }, (_, p) =>
      promisify(execFile)(process.execPath, [PRODUCER, '100', `p${p}`, '3600', ...modes.map((mode) => `race-${mode}:${mode}`)], { env }).then(({ stdout }) => JSON.parse(stdout) as Record<string, number[]>),
    ),
  );
  const keyed = (key: string) => db.rows<{ id: number; payload: string }>('SELECT id, CAST(payload AS CHAR) AS payload FROM jobs WHERE unique_key = ?', [key]);
  for (const mode of modes) {
    const rows = await keyed(`race-${mode}`);
    assert.equal(rows.length, 1, `one job for ${mode}`);
    assert.deepEqual(got.map((ids) => ids[`race-${mode}`]), Array(10).fill([rows[0]!.id]), `every enqueue of ${mode} returned it`);
  }
  const [row] = await keyed('race-replace');
  // The last enqueue to commit was some process's last.
  assert.equal(JSON.parse(row!.payload).n, 99);
  await db.admin.query("DELETE FROM jobs WHERE kind = 'sync' AND id <> ?", [row!.id]);
  assert.equal(await queue.runNow([row!.id]), 1);
  const claim = await queue.claim({ batchSize: 1, leaseSeconds: 60, kinds: ['sync'] });
  assert.deepEqual(claim.jobs.map((job) => job.payload), [JSON.parse(row!.payload)]);
  await queue.complete(claim);
  await queue.recount();
});

test("while 'active', 4 producer processes and 2 worker processes at once: the key's jobs never run side by side, and each runs once", async () => {
  const { db } = context;
  const { noRuns, runsOf, work } = timedRuns(context);
  await noRuns();
  const env = { ...process.env, JOBQ_DATABASE_URL: db.url };
  const workers = Array.from({ length: 2 }, () => work([], { RUN_MS: '20' }));
  const produced = await Promise.all(
    Array.from({ length: 4 }, (_, p) => promisify(execFile)(process.execPath, [PRODUCER, '50', `p${p}`, '0', 'one-at-a-time:active'], { env }).then(({ stdout }) => (JSON.parse(stdout) as Record<string, number[]>)['one-at-a-time']!)),
  );
  const jobs = new Set(produced.flat());
  await waitUntil(async () => (await db.rows("SELECT id FROM jobs WHERE kind = 'sync' LIMIT 1")).length === 0, 'the workers to run every job');
  for (const worker of workers) worker.kill('SIGTERM');
  for (const worker of workers) assert.equal((await worker.done).code, 0);
  const runs = await runsOf('sync');
  assert.deepEqual(new Set(runs.map((run) => Number(run.job_id))), jobs, 'every job queued ran');
  assert.equal(runs.length, jobs.size, 'each once');
  assert.equal(mostAtOnce(runs), 1, 'never two at once');
  assert.ok(jobs.size > 1, 'the key was free again once a job was done');
});
