import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseForTests } from './helpers/queue-fixtures.js';
import { duplicates, parseClaimLines, runCli } from './helpers/run-cli.js';

const db = databaseForTests(async (db) => {
  assert.equal((await runCli(['setup-tables', '--database-url', db.url])).code, 0);
});

test('2 generators and 10 consumers: every job generated is consumed exactly once', async () => {
  // --keep-done keeps every processed row, so the table itself lists what was generated.
  const result = await runCli(['start-processing', '-g', '2', '-c', '10', '--jobs', '8000', '--until-empty', '--keep-done', '--database-url', db.url]);
  assert.equal(result.code, 0, result.stderr);
  const claimed = parseClaimLines(result.stdout).flatMap((claim) => claim.ids);
  const rows = await db.rows<{ id: number; status: string }>('SELECT id, status FROM jobs');
  assert.equal(rows.length, 8000, 'generators made exactly --jobs jobs');
  assert.ok(rows.every((row) => row.status === 'done'), 'every job ended done');
  assert.deepEqual(duplicates(claimed), [], 'no id claimed twice');
  assert.deepEqual([...claimed].sort((a, b) => a - b), rows.map((row) => Number(row.id)).sort((a, b) => a - b));
  assert.match(result.stdout, /^jobs generated = 8000$/m);
  assert.match(result.stdout, /^jobs consumed = 8000$/m);
  assert.equal(result.stdout.match(/^counter = \d+$/gm)?.length, 8, 'a progress line per 1000 jobs of each generator');
});
