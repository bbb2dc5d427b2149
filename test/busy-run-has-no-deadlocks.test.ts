import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deadlocksSoFar } from './helpers/server-counters.js';
import { databaseForTests } from './helpers/queue-fixtures.js';
import { duplicates, parseClaimLines, runCli } from './helpers/run-cli.js';

const db = databaseForTests(async (db) => {
  assert.equal((await runCli(['setup-tables', '--database-url', db.url])).code, 0);
});

const deadlocks = () => deadlocksSoFar(db.admin);

// Counted in jobs, not seconds: what 10 s gets done depends on the machine's load (a machine
// thrashing for memory once got nothing done in them).
test('2 generators and 10 consumers, 5,000 jobs on a fresh table: no process dies, no deadlock, each job once', async () => {
  const before = await deadlocks();
  const result = await runCli(['start-processing', '--jobs', '5000', '--until-empty', '--keep-done', '--database-url', db.url]);
  const after = await deadlocks();
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /died|lost the connection/);
  // Any deadlock the server saw must have been one jobq retried and counted.
  const retried = Number(/^retried transactions = (\d+) deadlocks/m.exec(result.stdout)?.[1] ?? 0);
  assert.equal(after - before, retried, `the server's deadlock count moved by ${after - before}, jobq retried ${retried}`);
  const ids = parseClaimLines(result.stdout).flatMap((claim) => claim.ids);
  assert.equal(ids.length, 5000, 'every job claimed once');
  assert.deepEqual(duplicates(ids), []);
  const [{ claimed }] = await db.rows<{ claimed: number }>("SELECT COUNT(*) AS claimed FROM jobs WHERE status = 'claimed'");
  assert.equal(Number(claimed), 0);
});
