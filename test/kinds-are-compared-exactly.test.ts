import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { parseServerVersion } from '../src/db/server-version.js';
import { MIGRATIONS } from '../src/queue/sql/schema.js';
import type { Job } from '../src/queue/types.js';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { createTestDatabase } from './helpers/test-database.js';
import { waitUntil } from './helpers/wait.js';
import { quoteIdentifier } from '../src/config/identifiers.js';

/** Four kinds that a case- and accent-insensitive collation that pads with spaces takes for one. */
const KINDS = ['email', 'Email', 'email ', 'émail'];
const context = queueForTests();

test('kinds that differ only in case, accent or a trailing space are handled, paused and counted apart', async () => {
  const { queue, db } = context;
  for (const kind of KINDS) await queue.enqueueMany(Array.from({ length: 40 }, (_, n) => ({ kind, payload: { kind, n } })));
  await queue.pause('Email');
  await queue.resume('email'); // resumes nothing: only Email is paused
  assert.deepEqual(await queue.pausedKinds(), ['Email']);

  // Each kind but Email has a handler of its own, in two workers; a third worker takes every kind.
  const ran: Array<{ handler: string; job: Job }> = [];
  const handlerFor = (handler: string) => async (job: Job) => void ran.push({ handler, job });
  const byKind = () => ({ email: handlerFor('email'), 'email ': handlerFor('email '), émail: handlerFor('émail') });
  const workers = [queue.work(byKind(), { batchSize: 10 }), queue.work(byKind(), { batchSize: 10 }), queue.work(handlerFor('*'), { batchSize: 10 })];
  const failures: unknown[] = [];
  for (const worker of workers) worker.on('failed', (_job, error) => failures.push(error));
  try {
    await waitUntil(() => ran.length >= 120, 'the jobs of email, "email " and émail have run');
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
  assert.deepEqual(failures, [], 'no job failed for want of a handler');
  assert.equal(ran.length, 120);
  for (const { handler, job } of ran) {
    assert.equal((job.payload as { kind: string }).kind, job.kind, 'a job keeps its kind');
    if (handler !== '*') assert.equal(job.kind, handler, `the handler of ${JSON.stringify(handler)} got only its own kind`);
  }
  assert.ok(!ran.some(({ job }) => job.kind === 'Email'), 'no job of the paused kind Email ran');
  const stats = await queue.stats();
  assert.deepEqual(
    stats.byKind.map(({ kind, counts, paused, totals }) => [kind, counts.unclaimed, paused, totals.completed]),
    [
      ['Email', 40, true, 0],
      ['email', 0, false, 40],
      ['email ', 0, false, 40],
      ['émail', 0, false, 40],
    ],
  );

  const cli = (...args: string[]) => runCli([...args, '--database-url', db.url]);
  for (const name of ['nightly', 'Nightly', 'nightly ']) assert.equal((await cli('schedule', 'add', name, '--cron', '0 2 * * *', '--kind', 'report')).code, 0);
  assert.deepEqual((await queue.schedules()).map((s) => s.name), ['Nightly', 'nightly', 'nightly ']);
});

test('setup-tables migrates a table whose kinds were compared without regard to case, keeping every kind as written', async () => {
  const db = await createTestDatabase();
  try {
    const [{ version }] = await db.rows<{ version: string }>('SELECT VERSION() AS version');
    for (const migration of MIGRATIONS.filter((m) => m.version <= 10)) await db.admin.query(migration.sql(quoteIdentifier('jobs'), parseServerVersion(version), false), migration.values?.('jobs'));
    // run_after given, as jobq's inserts give it: MySQL computes the generated copies before the column's default.
    await db.admin.query(`INSERT INTO jobs (kind, run_after) VALUES ${KINDS.map(() => '(?, NOW(6))').join(', ')}`, KINDS);
    await db.admin.query("INSERT INTO jobq_paused_kinds (queue, kind) VALUES ('jobs', 'Email')");
    // MariaDB's default collation takes the four for one; MySQL's (NO PAD) tells only the trailing space apart.
    assert.ok((await db.rows('SELECT DISTINCT kind FROM jobs')).length < KINDS.length, 'before: fewer kinds to the server than were written');
    const queue = await JobQueue.open(db.url);
    try {
      await queue.setup();
      assert.deepEqual((await db.rows<{ kind: string }>('SELECT DISTINCT kind FROM jobs ORDER BY kind')).map((row) => row.kind), ['Email', 'email', 'email ', 'émail']);
      assert.deepEqual((await db.rows("SELECT kind FROM jobq_paused_kinds WHERE kind = 'email'")).length, 0, 'the pause of Email holds Email only');
    } finally {
      await queue.close();
    }
  } finally {
    await db.drop();
  }
});
