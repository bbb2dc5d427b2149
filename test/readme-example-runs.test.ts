import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/readme-example.mjs', import.meta.url));
const README = fileURLToPath(new URL('../../README.md', import.meta.url));

let db: TestDatabase;
before(async () => (db = await createTestDatabase()));
after(async () => db.drop());

test('the README shows the example file as it is', () => {
  const example = readFileSync(EXAMPLE, 'utf8');
  assert.ok(readFileSync(README, 'utf8').includes(`\`\`\`js\n${example}\`\`\``), 'README.md must quote examples/readme-example.mjs verbatim');
});

test('the README example runs as written, on a database it creates, and prints what the README says', async (t) => {
  const fresh = `${db.name}_example`;
  t.after(async () => void (await db.admin.query(`DROP DATABASE IF EXISTS \`${fresh}\``)));
  const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE], { env: { ...process.env, JOBQ_DATABASE_URL: `${db.url}_example` } });
  assert.equal(
    stdout,
    [
      'sending to ann@example.com, attempt 1',
      '{ settled: 1, lost: 0 }',
      '{ unclaimed: 1, claimed: 0, done: 0, failed: 0 }',
      '',
    ].join('\n'),
  );
});
