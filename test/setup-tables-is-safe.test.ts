import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CURRENT_SCHEMA_VERSION } from '../src/queue/sql/schema.js';
import { databaseForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';

const db = databaseForTests();

test('setup-tables creates the table once and is harmless when repeated', async () => {
  const first = await runCli(['setup-tables', '--database-url', db.url]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, new RegExp(`^created table jobs in database jobq_test_\\w+ \\(schema ${CURRENT_SCHEMA_VERSION}\\)$`, 'm'));
  await db.admin.query("INSERT INTO jobs (d, e) VALUES ('a', 'b'), ('c', 'd')");
  const second = await runCli(['setup-tables', '--database-url', db.url]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, new RegExp(`is up to date \\(schema ${CURRENT_SCHEMA_VERSION}\\)`));
  const [{ count }] = await db.rows<{ count: number }>('SELECT COUNT(*) AS count FROM jobs');
  assert.equal(Number(count), 2);
});

test('setup-tables creates the database named in the URL', async () => {
  const url = `${db.url}_made`;
  try {
    const result = await runCli(['setup-tables', '--database-url', url]);
    assert.equal(result.code, 0, result.stderr);
    const rows = await db.rows(`SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'jobs'`, [`${db.name}_made`]);
    assert.equal(rows.length, 1);
  } finally {
    await db.admin.query(`DROP DATABASE IF EXISTS \`${db.name}_made\``);
  }
});

test('--recreate refuses a non-empty table without --force, and says how many rows', async () => {
  const refused = await runCli(['setup-tables', '--recreate', '--database-url', db.url]);
  assert.equal(refused.code, 6);
  assert.equal(refused.stderr.trim(), 'jobq: table "jobs" holds 2 rows that --recreate would delete; add --force to drop them anyway');
  const [{ count }] = await db.rows<{ count: number }>('SELECT COUNT(*) AS count FROM jobs');
  assert.equal(Number(count), 2, 'no row may be lost by a refused --recreate');

  const forced = await runCli(['setup-tables', '--recreate', '--force', '--database-url', db.url]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, /dropped table jobs with 2 rows/);
  const [{ count: after }] = await db.rows<{ count: number }>('SELECT COUNT(*) AS count FROM jobs');
  assert.equal(Number(after), 0);
});

test("a table made by the article's program is adopted and migrated with its rows", async () => {
  await db.admin.query(`CREATE TABLE article_jobs (
    id integer not null primary key auto_increment, d varchar(64) not null, e varchar(64) not null,
    status enum("unclaimed", "claimed", "done") not null, owner_id integer null, owner_date datetime null,
    index(d), index(status))`);
  await db.admin.query("INSERT INTO article_jobs (d, e, status) VALUES ('x', 'y', 'unclaimed'), ('z', 'w', 'claimed')");
  const result = await runCli(['setup-tables', '--table', 'article_jobs', '--database-url', db.url]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, new RegExp(`migrated table article_jobs .* from schema 1 to ${CURRENT_SCHEMA_VERSION}; rows kept`));
  const rows = await db.rows<{ d: string; status: string }>('SELECT d, status FROM article_jobs ORDER BY id');
  assert.deepEqual(rows.map((r) => [r.d, r.status]), [['x', 'unclaimed'], ['z', 'claimed']]);
});

test('a foreign table of the same name is refused, not altered', async () => {
  await db.admin.query('CREATE TABLE other (id int primary key, name text)');
  const result = await runCli(['setup-tables', '--table', 'other', '--database-url', db.url]);
  assert.equal(result.code, 5);
  assert.match(result.stderr, /^jobq: table "other" in database "\w+" was not made by jobq \(columns: id,name\); pick another --table or drop it\n$/);
});
