import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { databaseForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';

const HANDLER = fileURLToPath(new URL('../../test/fixtures/record-ids-handler.mjs', import.meta.url));
const EMAIL_HANDLERS = fileURLToPath(new URL('../../test/fixtures/email-handlers.mjs', import.meta.url));

const db = databaseForTests(async (db) => {
  assert.equal((await runCli(['setup-tables', '--database-url', db.url])).code, 0);
  await db.admin.query('CREATE TABLE seen (id BIGINT NOT NULL, KEY (id))');
});

/** Pipes `input` into `jobq enqueue --stdin`. */
const enqueueStdin = (input: string) => runCli(['enqueue', '--stdin', '--database-url', db.url], {}, input);

test('enqueue --stdin 20,000 lines, then work --processes 4 --once --light-claim-pause-ms 0: the handler sees every id exactly once', async () => {
  const lines = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ kind: i % 2 ? 'odd' : 'even', payload: { n: i } })).join('\n');
  const queued = await enqueueStdin(`${lines}\n`);
  assert.equal(queued.code, 0, queued.stderr);
  const range = /^queued 20000 jobs \(ids (\d+)\.\.(\d+)\)$/.exec(queued.stdout.trim());
  assert.ok(range, queued.stdout);
  const ids = (await db.rows<{ id: number }>('SELECT id FROM jobs ORDER BY id')).map((row) => Number(row.id));
  assert.equal(ids.length, 20_000);
  assert.deepEqual([ids[0], ids.at(-1)], [Number(range[1]), Number(range[2])]);

  const work = await runCli(['work', '--handler', HANDLER, '--processes', '4', '--once', '--light-claim-pause-ms', '0', '--database-url', db.url], {
    JOBQ_DATABASE_URL: db.url,
  });
  assert.equal(work.code, 0, work.stderr);
  assert.match(work.stdout, /^jobs consumed = 20000$/m);
  const [seen] = await db.rows<{ total: number; distinct_: number }>('SELECT COUNT(*) AS total, COUNT(DISTINCT id) AS distinct_ FROM seen');
  assert.equal(Number(seen!.total), 20_000, 'no job handled twice');
  assert.equal(Number(seen!.distinct_), 20_000, 'every job handled');
  const seenIds = (await db.rows<{ id: number }>('SELECT id FROM seen ORDER BY id')).map((row) => Number(row.id));
  assert.deepEqual(seenIds, ids);
  assert.equal((await db.rows('SELECT id FROM jobs')).length, 0, 'completed jobs are deleted');
});

test('a bad line is reported with its number, and nothing from its chunk is written', async () => {
  const good = Array.from({ length: 1500 }, (_, i) => JSON.stringify({ payload: { n: i } }));
  good.splice(1200, 0, '{"payload": oops}');
  const before = (await db.rows('SELECT id FROM jobs')).length;
  const result = await enqueueStdin(`${good.join('\n')}\n`);
  assert.equal(result.code, 2);
  assert.match(result.stderr.trim(), /^jobq: line 1201: not JSON \(.*\); queued 1000 jobs \(ids \d+\.\.\d+\) from the lines before 1001; nothing from line 1001 on was written$/);
  assert.equal((await db.rows('SELECT id FROM jobs')).length - before, 1000, 'the first chunk is in, the second not at all');
});

test('work --processes 2 --once with a handler map waits for its own kinds only, and leaves the others', async () => {
  await db.admin.query('DELETE FROM jobs');
  const queued = await enqueueStdin('{"kind": "email", "payload": {"to": "ann"}}\n{"kind": "email", "payload": {"to": "bob"}}\n{"kind": "sms", "payload": {}}\n');
  assert.equal(queued.code, 0, queued.stderr);
  const work = await runCli(['work', '--handler', EMAIL_HANDLERS, '--processes', '2', '--once', '--database-url', db.url]);
  assert.equal(work.code, 0, work.stderr);
  assert.match(work.stdout, /^jobs consumed = 2$/m);
  assert.deepEqual(await db.rows('SELECT kind, status FROM jobs'), [{ kind: 'sms', status: 'unclaimed' }]);
});
