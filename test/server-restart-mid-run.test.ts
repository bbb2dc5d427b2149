import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { keptTotals } from './helpers/kept-totals.js';
import { PrivateServer, privatePort } from './helpers/private-server.js';
import { duplicates, parseClaimLines, runCli, startCli } from './helpers/run-cli.js';

const server = new PrivateServer(privatePort(10_000));
const database = `jobq_fault_${randomBytes(4).toString('hex')}`;
const url = server.url(database);

before(async () => {
  await server.start();
});
after(async () => {
  await server.destroy();
});

test('the private server restarts mid-run: the run goes on, nothing lost or duplicated, the kept counts exact', async () => {
  assert.equal((await runCli(['setup-tables', '--database-url', url])).code, 0);
  const processing = startCli(['start-processing', '-g', '2', '-c', '10', '--jobs', '20000', '--until-empty', '--keep-done', '--work-ms', '5', '--database-url', url]);
  await processing.waitFor(/^counter = 2000$/m, 120_000); // a loaded machine may take long to get there
  await server.stop();
  await processing.waitFor(/lost the connection to the server/);
  await sleep(1500);
  await server.start();
  await processing.waitFor(/connection is back/);
  const result = await processing.done;

  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /died/);
  const [{ keys_, total, done }] = await server.query<{ keys_: number; total: number; done: string }>(`SELECT COUNT(DISTINCT job_key) AS keys_, COUNT(*) AS total, SUM(status = 'done') AS done FROM ${database}.jobs`);
  assert.equal(Number(total), 20_000, 'every generated job is in the table once (the unique key refused re-sent duplicates)');
  assert.equal(Number(keys_), 20_000);
  assert.equal(Number(done), 20_000, 'every job was consumed');
  // Inserts and settles cut off by the restart were sent again: the kept counts counted each job once.
  assert.deepEqual(await keptTotals((sql) => server.query(sql), database), { waiting: 0, done: 20_000, failed: 0 }, 'the kept counts equal a full count');
  const ids = parseClaimLines(result.stdout).flatMap((claim) => claim.ids);
  assert.deepEqual(duplicates(ids), [], 'no job was handed to two consumers');
  assert.equal(ids.length, 20_000);
  assert.match(result.stdout, /^jobs generated = 20000$/m);
  assert.match(result.stdout, /^jobs consumed = 20000$/m);
});
