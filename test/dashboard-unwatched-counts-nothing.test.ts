import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { createTestDatabase, SERVER_URL, type TestDatabase } from './helpers/test-database.js';
import { startCli, type CliRun } from './helpers/run-cli.js';
import { statementsOf } from './helpers/server-counters.js';
import { waitUntil } from './helpers/wait.js';

// A dashboard nobody watches reads its chart's totals and the highest id, and counts no jobs:
// by the server's own log of what that dashboard's user ran. A page that asks makes it count.

let db: TestDatabase;
const user = `jobq_watch_${randomBytes(4).toString('hex')}`;
let dashboard: CliRun | undefined;

before(async () => {
  db = await createTestDatabase();
  const queue = await JobQueue.open(db.url);
  await queue.setup();
  await queue.enqueueMany(Array.from({ length: 3000 }, (_, n) => ({ kind: n % 2 === 0 ? 'email' : 'report' })));
  await queue.close();
  await db.admin.query("CREATE USER ?@? IDENTIFIED BY ''", [user, '%']);
  await db.admin.query(`GRANT ALL ON \`${db.name}\`.* TO ?@?`, [user, '%']);
});
after(async () => {
  dashboard?.kill('SIGINT');
  await dashboard?.done;
  await db.admin.query('DROP USER IF EXISTS ?@?', [user, '%']);
  await db.drop();
});

/** Statements that count jobs (stats() and its siblings), among those logged. */
const counting = (statements: string[]) => statements.filter((statement) => /COUNT\(/i.test(statement));
/** The dashboard's reads for its chart: the running totals. */
const chartReads = (statements: string[]) => statements.filter((statement) => statement.includes('jobq_counters') && statement.includes('SUM(completed)'));

test('unwatched, `jobq dashboard` runs no count statement, by the server\'s log; once a page asks, it does', async () => {
  const url = `mysql://${user}@${new URL(SERVER_URL).host}/${db.name}`;
  dashboard = startCli(['dashboard', '--port', '0', '--database-url', url]);
  const base = (await dashboard.waitFor(/^jobq dashboard on (http:\/\/127\.0\.0\.1:\d+) /m))[1]!;
  let watched: string[] = [];
  const unwatched = await statementsOf(db.admin, user, async (logged) => {
    await waitUntil(async () => chartReads(await logged()).length >= 3, 'three readings of the chart', { timeoutMs: 20_000 });
    const before = (await logged()).length;
    const answer = await fetch(`${base}/api/stats`);
    assert.equal(answer.status, 200);
    watched = (await logged()).slice(before);
  });
  assert.ok(chartReads(unwatched).length >= 3);
  assert.deepEqual(counting(unwatched.slice(0, unwatched.length - watched.length)), [], 'no count statement while nobody watched');
  assert.ok(counting(watched).length > 0, `a page's ask counts the jobs (${watched.length} statements)`);
});
