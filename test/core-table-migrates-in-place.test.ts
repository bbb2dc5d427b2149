import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { parseServerVersion } from '../src/db/server-version.js';
import { CURRENT_SCHEMA_VERSION, MIGRATIONS } from '../src/queue/sql/schema.js';
import { databaseForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { quoteIdentifier } from '../src/config/identifiers.js';

const db = databaseForTests(async (db) => {
  // The table as the core version (schema 2) left it, with jobs in every state.
  const [{ version }] = await db.rows<{ version: string }>('SELECT VERSION() AS version');
  for (const migration of MIGRATIONS.filter((m) => m.version <= 2)) await db.admin.query(migration.sql(quoteIdentifier('jobs'), parseServerVersion(version), false), migration.values?.('jobs'));
  await db.admin.query("INSERT INTO jobs (d, e, job_key, status) VALUES ('a', 'b', 'k1', 'unclaimed'), ('c', 'd', 'k2', 'done'), ('e', 'f', 'k3', 'failed')");
  // ...one held by a consumer that died: its lease ran out a minute ago; one due in an hour.
  await db.admin.query(
    "INSERT INTO jobs (d, e, job_key, status, owner_id, owner_date, claim_token, run_after) VALUES ('g', 'h', 'k4', 'claimed', 7, NOW(6), X'0102', NOW(6) - INTERVAL 1 MINUTE)",
  );
  await db.admin.query("INSERT INTO jobs (d, e, job_key, status, run_after) VALUES ('i', 'j', 'k5', 'unclaimed', NOW(6) + INTERVAL 1 HOUR)");
});

test('setup-tables migrates a core-version table in place, keeping its rows', async () => {
  const stats = await runCli(['stats', '--database-url', db.url]);
  assert.equal(stats.code, 5);
  assert.match(stats.stderr, new RegExp(`has schema version 2, this jobq needs ${CURRENT_SCHEMA_VERSION}; run "jobq setup-tables" to migrate it \\(rows are kept\\)`));

  const result = await runCli(['setup-tables', '--database-url', db.url]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, new RegExp(`^migrated table jobs in database \\w+ from schema 2 to ${CURRENT_SCHEMA_VERSION}; rows kept$`, 'm'));
  const rows = await db.rows<{ d: string; job_key: string; status: string; kind: null; payload: null; owner_id: number; token: string }>(
    'SELECT d, job_key, status, kind, payload, owner_id, HEX(claim_token) AS token FROM jobs ORDER BY id',
  );
  const nobody = '0'.repeat(32);
  assert.deepEqual(rows.map((r) => [r.d, r.job_key, r.status, r.kind, r.payload, r.owner_id, r.token]), [
    ['a', 'k1', 'unclaimed', null, null, 0, nobody],
    ['c', 'k2', 'done', null, null, 0, nobody],
    ['e', 'k3', 'failed', null, null, 0, nobody],
    ['g', 'k4', 'claimed', null, null, 7, `0102${'0'.repeat(28)}`],
    ['i', 'k5', 'scheduled', null, null, 0, nobody],
  ]);

  // MariaDB's JSON columns carried a json_valid check that it ran at every UPDATE of a row: none is left.
  const checks = await db.rows<{ name: string }>(
    "SELECT CONSTRAINT_NAME AS name FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'jobs' AND CONSTRAINT_TYPE = 'CHECK'",
  );
  assert.deepEqual(checks, []);

  const queue = await JobQueue.open(db.url);
  try {
    const [a, g] = await db.rows<{ id: number }>("SELECT id FROM jobs WHERE d IN ('a', 'g') ORDER BY id");
    // The expired lease first, and alone: its job may be what stopped the consumer that held it.
    const expired = await queue.claim({ batchSize: 10 });
    assert.deepEqual(expired.jobs.map((job) => [job.id, job.kind, job.payload, job.leaseExpiries]), [[g!.id, null, null, 1]], 'an expired lease is claimable as before');
    const waiting = await queue.claim({ batchSize: 10 });
    assert.deepEqual(waiting.jobs.map((job) => [job.id, job.kind, job.payload, job.attempts]), [[a!.id, null, null, 1]], 'so are old waiting jobs');
    assert.deepEqual(await queue.complete(expired), { settled: 1, lost: 0 });
    assert.deepEqual(await queue.complete(waiting), { settled: 1, lost: 0 });
    await queue.enqueue({ kind: 'new', payload: { ok: true } });
    assert.deepEqual((await queue.claim({ batchSize: 10, kinds: ['new'] })).jobs.map((job) => job.payload), [{ ok: true }]);
    // The job due in an hour waits as scheduled until then, and is counted so.
    assert.equal((await queue.claim({ batchSize: 10 })).jobs.length, 0);
    assert.equal((await queue.stats()).counts.scheduled, 1);
  } finally {
    await queue.close();
  }
});
