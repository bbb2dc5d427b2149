import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import mysql from 'mysql2/promise';
import { quoteIdentifier } from '../src/config/identifiers.js';
import { JobQueue } from '../src/index.js';
import * as claimSql from '../src/claim/sql/claim.js';
import { createTestDatabase, serverConnectionOptions, type TestDatabase } from './helpers/test-database.js';
import { prefill } from './helpers/queue-fixtures.js';
import { duplicates, parseClaimLines, runCli } from './helpers/run-cli.js';

const WORKER = fileURLToPath(new URL('../../test/fixtures/work-until-drained.mjs', import.meta.url));
const BACKLOG = 20_000;

let db: TestDatabase;
let queue: JobQueue;
before(async () => {
  db = await createTestDatabase();
  await prefill(db.url, BACKLOG);
  await db.admin.query('CREATE TABLE seen (id BIGINT NOT NULL, KEY (id))');
});
after(async () => {
  await queue?.close();
  await db.drop();
});

const ids = async () => (await db.rows<{ id: number }>('SELECT id FROM jobs ORDER BY id')).map((row) => Number(row.id));

test('setup-tables --partitions 8 partitions an existing table on id and keeps every row', async () => {
  const before = await ids();
  const result = await runCli(['setup-tables', '--partitions', '8', '--database-url', db.url]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^table jobs: partitioned by HASH \(id\) into 8 partitions$/m);
  assert.deepEqual(await ids(), before, 'the same rows, the same ids');
  const partitions = await db.rows<{ name: string; rows: number }>(
    "SELECT PARTITION_NAME AS name FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'jobs' ORDER BY PARTITION_ORDINAL_POSITION",
    [db.name],
  );
  assert.deepEqual(partitions.map((p) => p.name), ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']);
  const [{ keys }] = await db.rows<{ keys: number }>("SELECT COUNT(*) AS `keys` FROM jobq_job_keys WHERE queue = 'jobs'");
  assert.equal(Number(keys), BACKLOG, "every job's key is recorded where its uniqueness now lives");
  const stats = await runCli(['stats', '--database-url', db.url]);
  assert.match(stats.stdout, /^table: partitioned by HASH \(id\) into 8 partitions$/m);
  queue = await JobQueue.open(db.url);
});

test("EXPLAIN: a lane's candidate query reads only its partitions; locking by id touches only the ids' partitions", async () => {
  const table = quoteIdentifier('jobs');
  const explain = (sql: string, values: readonly unknown[]) => db.explain<{ table: string | null; partitions: string | null; key: string | null; type: string }>(sql, values);
  const plan = await explain(...claimSql.candidatesOldest(table, {}, { index: 3, count: 8, partitions: 8 }, 100));
  const lane = plan.filter((row) => row.table === 'jobs' && row.partitions === 'p3');
  assert.equal(lane.length, 1, `one read of partition p3 alone: ${JSON.stringify(plan)}`);
  assert.equal(lane[0]!.key, 'status_priority_run_after');
  assert.match(lane[0]!.type, /^(range|ref)$/);
  // Four lanes over eight partitions: lane 1 reads p1 and p5.
  const shared = await explain(...claimSql.candidatesOldest(table, {}, { index: 1, count: 4, partitions: 8 }, 100));
  assert.ok(shared.some((row) => row.partitions === 'p1,p5'), JSON.stringify(shared));
  const lock = await explain(claimSql.LOCK_CANDIDATES_SQL(table), [[8, 16, 17]]);
  assert.deepEqual(lock.map((row) => row.partitions), ['p0,p1'], 'ids 8 and 16 live in p0, 17 in p1');
});

test('job keys stay unique: a key held by a job returns that job, a freed key queues anew, a batch never queues a key twice', async () => {
  const first = await queue.enqueue({ kind: 'welcome', payload: { to: 'bob' }, key: 'welcome-bob' });
  assert.equal(await queue.enqueue({ kind: 'welcome', payload: { to: 'bob' }, key: 'welcome-bob' }), first, 'the same key gives the same job');
  const many = await queue.enqueueMany([
    { kind: 'welcome', key: 'welcome-ann' },
    { kind: 'welcome', key: 'welcome-bob' },
    { kind: 'welcome', key: 'welcome-ann' },
  ]);
  assert.equal(many.count, 3);
  const rows = await db.rows<{ id: number; job_key: string }>("SELECT id, job_key FROM jobs WHERE kind = 'welcome' ORDER BY id");
  assert.deepEqual(rows.map((row) => row.job_key), ['welcome-bob', 'welcome-ann'], 'one job per key');
  assert.equal(many.firstId, first);
  // The job goes (cancelled here); its key is free again for a new job.
  await queue.cancel([first]);
  const again = await queue.enqueue({ kind: 'welcome', payload: { to: 'bob' }, key: 'welcome-bob' });
  assert.ok(again > first, 'a new job');
  const [{ held }] = await db.rows<{ held: number }>("SELECT job_id AS held FROM jobq_job_keys WHERE queue = 'jobs' AND job_key = 'welcome-bob'");
  assert.equal(Number(held), again);
  await queue.cancel([again, ...rows.map((row) => Number(row.id))]);
});

test('writers racing with the same keys: each key queued exactly once', async () => {
  const writers = await Promise.all(Array.from({ length: 4 }, () => JobQueue.open(db.url)));
  try {
    // Each writer sends the same 300 keys in its own order, 50 per chunk, all at once.
    const keys = Array.from({ length: 300 }, (_, i) => `race-${i}`);
    await Promise.all(
      writers.map(async (writer, w) => {
        const mine = w % 2 === 0 ? keys : [...keys].reverse();
        for (let i = 0; i < mine.length; i += 50) await writer.enqueueMany(mine.slice(i, i + 50).map((key) => ({ kind: 'race', key })));
      }),
    );
  } finally {
    await Promise.all(writers.map((writer) => writer.close()));
  }
  const [{ total, distinct_ }] = await db.rows<{ total: number; distinct_: number }>("SELECT COUNT(*) AS total, COUNT(DISTINCT job_key) AS distinct_ FROM jobs WHERE kind = 'race'");
  assert.equal(Number(distinct_), 300);
  assert.equal(Number(total), 300, 'no key queued twice');
  assert.equal((await queue.stats()).byKind.find((entry) => entry.kind === 'race')?.counts.unclaimed, 300, 'each job counted once');
  await queue.cancel((await db.rows<{ id: number }>("SELECT id FROM jobs WHERE kind = 'race'")).map((row) => Number(row.id)));
});

test("enqueue inside the caller's transaction on a partitioned table: rollback leaves nothing, commit one job", async () => {
  // The application's own connection, with no default database: jobq names its tables in full.
  const app = await mysql.createConnection(serverConnectionOptions());
  try {
    await app.beginTransaction();
    await queue.enqueue({ kind: 'mail', key: 'order-1' }, { connection: app });
    await app.rollback();
    assert.equal((await db.rows("SELECT id FROM jobs WHERE job_key = 'order-1'")).length, 0);
    assert.equal((await db.rows("SELECT job_id FROM jobq_job_keys WHERE job_key = 'order-1'")).length, 0, 'the key went with the rollback');
    await app.beginTransaction();
    const id = await queue.enqueue({ kind: 'mail', key: 'order-1' }, { connection: app });
    assert.equal(await queue.enqueue({ kind: 'mail', key: 'order-1' }, { connection: app }), id, 'its key holds inside the transaction too');
    await app.commit();
    assert.deepEqual((await db.rows<{ id: number }>("SELECT id FROM jobs WHERE job_key = 'order-1'")).map((row) => Number(row.id)), [id]);
    assert.equal((await queue.stats()).byKind.find((entry) => entry.kind === 'mail')?.counts.unclaimed, 1, 'counted once, the rolled back one not at all');
    await queue.cancel([id]);

    // No transaction open (autocommit): each enqueue commits at once, and a key still holds.
    const first = await queue.enqueue({ kind: 'mail', key: 'order-2' }, { connection: app });
    assert.equal(await queue.enqueue({ kind: 'mail', key: 'order-2' }, { connection: app }), first, 'a repeated key returns the job it holds');
    assert.deepEqual((await db.rows<{ id: number }>("SELECT id FROM jobs WHERE job_key = 'order-2'")).map((row) => Number(row.id)), [first], 'one job, visible at once');
    await queue.cancel([first]);
  } finally {
    await app.end();
  }
});

test('4 independent workers drain the partitioned table, lanes reading partitions: every job handled exactly once', async () => {
  await queue.prune({ failedOlderThan: 0 }); // the jobs the tests before cancelled
  const runs = Array.from({ length: 4 }, () => promisify(execFile)(process.execPath, [WORKER], { env: { ...process.env, JOBQ_DATABASE_URL: db.url } }));
  const counters = (await Promise.all(runs)).map(({ stdout }) => JSON.parse(stdout) as { completed: number; claims: number; emptyClaims: number });
  const [seen] = await db.rows<{ total: number; distinct_: number }>('SELECT COUNT(*) AS total, COUNT(DISTINCT id) AS distinct_ FROM seen');
  assert.equal(Number(seen!.distinct_), BACKLOG, 'every job handled');
  assert.equal(Number(seen!.total), BACKLOG, 'no job handled twice');
  assert.equal(counters.reduce((sum, c) => sum + c.completed, 0), BACKLOG);
  assert.equal((await ids()).length, 0, 'completed jobs are deleted');
  assert.deepEqual((await queue.stats()).counts, { unclaimed: 0, claimed: 0, done: 0, failed: 0, cancelled: 0, scheduled: 0 }, 'the kept counts equal a full count');
});

test('start-processing on the partitioned table: 2 generators, 10 consumers, every job consumed once; prune then drops the keys of gone jobs', async () => {
  const result = await runCli(['start-processing', '-g', '2', '-c', '10', '--jobs', '6000', '--until-empty', '--keep-done', '--database-url', db.url]);
  assert.equal(result.code, 0, result.stderr);
  const claimed = parseClaimLines(result.stdout).flatMap((claim) => claim.ids);
  const rows = await db.rows<{ id: number; status: string }>('SELECT id, status FROM jobs');
  assert.equal(rows.length, 6000);
  assert.ok(rows.every((row) => row.status === 'done'));
  assert.deepEqual(duplicates(claimed), [], 'no id claimed twice');
  assert.equal(claimed.length, 6000);

  const pruned = await runCli(['prune', '--done-older-than', '0', '--database-url', db.url]);
  assert.equal(pruned.code, 0, pruned.stderr);
  // The 20,000 jobs of the backlog and these 6,000 are gone; their keys go with the prune.
  assert.match(pruned.stdout, /^pruned 6000 done, 0 failed and 0 cancelled jobs and 26\d\d\d keys of gone jobs in \d+ chunks$/m);
  const [{ keys }] = await db.rows<{ keys: number }>("SELECT COUNT(*) AS `keys` FROM jobq_job_keys WHERE queue = 'jobs'");
  assert.equal(Number(keys), 0);
});

test('setup-tables --partitions 0 puts the table back in one piece with its unique job_key', async () => {
  await queue.enqueue({ kind: 'keep', key: 'kept-1' });
  const result = await runCli(['setup-tables', '--partitions', '0', '--database-url', db.url]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^table jobs: not partitioned$/m);
  const [{ unique }] = await db.rows<{ unique: number }>(
    "SELECT 1 - MIN(NON_UNIQUE) AS `unique` FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'jobs' AND INDEX_NAME = 'job_key'",
    [db.name],
  );
  assert.equal(Number(unique), 1);
  assert.equal((await db.rows("SELECT id FROM jobs WHERE job_key = 'kept-1'")).length, 1, 'rows kept');
  assert.equal((await db.rows("SELECT job_key FROM jobq_job_keys WHERE queue = 'jobs'")).length, 0);
});
