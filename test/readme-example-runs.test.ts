import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { README_EXAMPLE_OUTPUT } from './helpers/readme-example.js';
import { databaseForTests } from './helpers/queue-fixtures.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/readme-example.mjs', import.meta.url));
const ORDER_EXAMPLE = fileURLToPath(new URL('../../examples/order-and-email.mjs', import.meta.url));
const README = fileURLToPath(new URL('../../README.md', import.meta.url));
const LIBRARY_GUIDE = fileURLToPath(new URL('../../docs/library.md', import.meta.url));

const db = databaseForTests();

test('the README and the library guide show the example files as they are', () => {
  for (const [file, page] of [[EXAMPLE, README], [ORDER_EXAMPLE, LIBRARY_GUIDE]] as const) {
    const example = readFileSync(file, 'utf8');
    assert.ok(readFileSync(page, 'utf8').includes(`\`\`\`js\n${example}\`\`\``), `${page} must quote ${file} verbatim`);
  }
});

test('the transactional example commits the order and its email job together', async (t) => {
  const fresh = `${db.name}_orders`;
  t.after(async () => void (await db.admin.query(`DROP DATABASE IF EXISTS \`${fresh}\``)));
  const { stdout } = await promisify(execFile)(process.execPath, [ORDER_EXAMPLE], {
    env: { ...process.env, JOBQ_DATABASE_URL: `${db.url}_orders`, APP_DATABASE_URL: db.url },
  });
  assert.equal(stdout, '1 email job waiting\n');
  assert.deepEqual(await db.rows('SELECT item FROM orders'), [{ item: 'lamp' }]);
});

test('the README example runs as written, on a database it creates, and prints what the README says', async (t) => {
  const fresh = `${db.name}_example`;
  t.after(async () => void (await db.admin.query(`DROP DATABASE IF EXISTS \`${fresh}\``)));
  const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE], { env: { ...process.env, JOBQ_DATABASE_URL: `${db.url}_example` } });
  assert.equal(stdout, README_EXAMPLE_OUTPUT);
});
