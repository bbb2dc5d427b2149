import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { databaseForTests } from './helpers/queue-fixtures.js';
import { SERVER_ADDRESS } from './helpers/test-database.js';
import { runCli } from './helpers/run-cli.js';

const db = databaseForTests(async (db) => {
  const queue = await JobQueue.open({ url: db.url });
  await queue.setup();
  await queue.enqueueMany(Array.from({ length: 5 }, () => ({})));
  await queue.claim({ batchSize: 2, ownerId: 3 });
  // A done job put there by hand: done jobs are kept count of, so a recount follows.
  await db.admin.query("UPDATE jobs SET status = 'done' WHERE id = 5");
  await queue.recount();
  await queue.close();
});

test('stats prints every status, the total, the head age and claims per owner', async () => {
  const result = await runCli(['stats', '--database-url', db.url]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trimEnd().split('\n');
  assert.equal(lines[0], `table jobs in ${db.name} at ${SERVER_ADDRESS}`);
  assert.deepEqual(lines.slice(1, 9), [
    '| status    | count(status) |',
    '| unclaimed |             2 |',
    '| claimed   |             2 |',
    '| done      |             1 |',
    '| failed    |             0 |',
    '| cancelled |             0 |',
    '| scheduled |             0 |',
    '| total     |             5 |',
  ]);
  assert.match(lines[9]!, /^oldest unclaimed job: \d+\.\d\d s old$/);
  assert.equal(lines[10], 'claimed per owner: consumer 3: 2');
  assert.deepEqual(lines.slice(11, 13), [
    '| kind   | waiting | scheduled | running |  failed |    done | cancelled |  paused |',
    '| (none) |       2 |         0 |       2 |       0 |       1 |         0 |         |',
  ]);
  assert.match(lines[13]!, /^server: \d+\.\d+\.\d+\S*, default isolation [A-Z-]+ \(jobq uses READ-COMMITTED\), binlog (off|[A-Z]+)$/);
});

test('stats --json prints one object with stable keys', async () => {
  const result = await runCli(['stats', '--json', '--database-url', db.url]);
  assert.equal(result.code, 0, result.stderr);
  const stats = JSON.parse(result.stdout);
  assert.deepEqual(Object.keys(stats), ['database', 'table', 'counts', 'total', 'byKind', 'everyKindLimit', 'oldestUnclaimedAgeSeconds', 'claimedByOwner', 'pausedKinds', 'skippedSchedules', 'partitions', 'partitionedBy', 'completedPerSecond', 'server']);
  assert.deepEqual(stats.byKind, [{ kind: null, counts: { unclaimed: 2, claimed: 2, done: 1, failed: 0, cancelled: 0, scheduled: 0 }, paused: false, limit: null, nextScheduledAt: null, totals: { completed: 0, failed: 0, retried: 0 } }]);
  assert.deepEqual(stats.pausedKinds, []);
  assert.equal(stats.completedPerSecond, null);
  assert.deepEqual(Object.keys(stats.server), ['version', 'isolationLevel', 'binlogFormat', 'binlogEnabled']);
  assert.deepEqual(stats.counts, { unclaimed: 2, claimed: 2, done: 1, failed: 0, cancelled: 0, scheduled: 0 });
  assert.equal(stats.total, 5);
  assert.equal(typeof stats.oldestUnclaimedAgeSeconds, 'number');
  assert.deepEqual(stats.claimedByOwner, [{ ownerId: 3, count: 2, expiredLeases: 0 }]);
});

test('stats --watch redraws until interrupted', async () => {
  const { startCli } = await import('./helpers/run-cli.js');
  const run = startCli(['stats', '--watch', '0.2', '--database-url', db.url]);
  await run.waitFor(/(^-- .*\n(?:.*\n){15}){3}/m);
  run.kill('SIGINT');
  const result = await run.done;
  assert.equal(result.code, 0, result.stderr);
  assert.ok((result.stdout.match(/^\| total     \|             5 \|$/gm)?.length ?? 0) >= 3);
  assert.match(result.stdout, /^completed: 0 jobs\/s since the last reading$/m, 'from the second reading on, the rate');
});

test('stats on a missing table says to run setup-tables', async () => {
  const result = await runCli(['stats', '--table', 'nothing_here', '--database-url', db.url]);
  assert.equal(result.code, 5);
  assert.equal(result.stderr, `jobq: table "nothing_here" does not exist in database "${db.name}"; run "jobq setup-tables" first\n`);
});
