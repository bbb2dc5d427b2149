import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { preparePrismaExample } from './helpers/prisma-client.js';
import { databaseForTests } from './helpers/queue-fixtures.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const LIBRARY_GUIDE = readFileSync(fileURLToPath(new URL('../../docs/library.md', import.meta.url)), 'utf8');
const LIBRARIES = ['knex', 'kysely', 'drizzle', 'typeorm', 'sequelize', 'prisma'];

const db = databaseForTests(undefined, () => db.admin.query(`DROP DATABASE IF EXISTS \`${db.name}_jobq\``));

test('the library guide shows each ORM example as it is', () => {
  for (const library of LIBRARIES) {
    const example = readFileSync(`${EXAMPLES}with-${library}.mjs`, 'utf8');
    assert.ok(LIBRARY_GUIDE.includes(`\`\`\`js\n${example}\`\`\``), `docs/library.md must quote examples/with-${library}.mjs verbatim`);
  }
});

for (const library of LIBRARIES) {
  test(`examples/with-${library}.mjs commits an order and its email job together`, async () => {
    const prisma = library === 'prisma' ? await preparePrismaExample() : undefined;
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [prisma?.example ?? `${EXAMPLES}with-${library}.mjs`], {
        env: { ...process.env, APP_DATABASE_URL: db.url, JOBQ_DATABASE_URL: `${db.url}_jobq` },
      });
      const printed = /^order (\d+) and its email job (\d+)\n$/.exec(stdout);
      assert.ok(printed, `one line: ${stdout}`);
      const [orderId, jobId] = [Number(printed[1]), Number(printed[2])];
      assert.deepEqual(await db.rows('SELECT item FROM orders WHERE id = ?', [orderId]), [{ item: 'lamp' }]);
      const jobs = await db.rows<{ kind: string; payload: string }>(`SELECT kind, CAST(payload AS CHAR) AS payload FROM \`${db.name}_jobq\`.jobs WHERE id = ?`, [jobId]);
      assert.deepEqual(
        jobs.map((job) => [job.kind, JSON.parse(job.payload)]),
        [['email', { orderId }]],
      );
    } finally {
      prisma?.remove();
    }
  });
}
