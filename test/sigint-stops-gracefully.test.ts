import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseForTests } from './helpers/queue-fixtures.js';
import { duplicates, parseClaimLines, startCli } from './helpers/run-cli.js';

const db = databaseForTests();

test('SIGINT mid-run: consumers finish their batch, summary printed, exit 0, nothing left claimed', async () => {
  const args = ['start-processing', '--work-ms', '300', '--keep-done', '--database-url', db.url];
  const setup = startCli(['setup-tables', '--database-url', db.url]);
  assert.equal((await setup.done).code, 0);
  const run = startCli(args);
  await run.waitFor(/^consumer  \d+ #records = /m);
  await run.waitFor(/^counter = 1000$/m);
  run.kill('SIGINT');
  const result = await run.done;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /SIGINT: stopping; workers finish the jobs in hand/);
  assert.match(result.stdout, /^summary$/m);
  assert.match(result.stdout, /^\| claimed   \|             0 \|$/m);
  const claimed = await db.rows("SELECT id FROM jobs WHERE status = 'claimed'");
  assert.equal(claimed.length, 0, 'no job may be left claimed');
  // Every batch that was claimed was processed to the end (done), none twice.
  const ids = parseClaimLines(result.stdout).flatMap((claim) => claim.ids);
  assert.deepEqual(duplicates(ids), []);
  const done = await db.rows<{ id: number }>("SELECT id FROM jobs WHERE status = 'done'");
  assert.deepEqual(done.map((row) => Number(row.id)).sort((a, b) => a - b), ids.sort((a, b) => a - b));
  const [{ queued }] = await db.rows<{ queued: number }>('SELECT COUNT(*) AS queued FROM jobs');
  assert.match(result.stdout, new RegExp(`^jobs generated = ${queued}$`, 'm'), 'generators committed what they counted');
});
