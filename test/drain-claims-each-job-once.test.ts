import assert from 'node:assert/strict';
import { test } from 'node:test';
import { duplicates, parseClaimLines, runCli } from './helpers/run-cli.js';
import { databaseForTests, prefill } from './helpers/queue-fixtures.js';

const db = databaseForTests();

for (const pick of ['random-prefix', 'oldest']) {
  test(`10 consumers (--pick ${pick}) drain 20,000 queued jobs, each exactly once`, async () => {
    await prefill(db.url, 20_000);
    const queued = (await db.rows<{ id: number }>('SELECT id FROM jobs')).map((row) => Number(row.id));
    assert.equal(queued.length, 20_000);

    const result = await runCli(['start-processing', '--generators', '0', '--consumers', '10', '--until-empty', '--pick', pick, '--database-url', db.url]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');

    const claims = parseClaimLines(result.stdout);
    const claimed = claims.flatMap((claim) => claim.ids);
    assert.deepEqual(duplicates(claimed), [], 'no id may be claimed twice');
    assert.deepEqual([...claimed].sort((a, b) => a - b), [...queued].sort((a, b) => a - b), 'every queued id claimed');
    assert.ok(claims.every((c) => c.ids.length <= 100 && c.ids.every((id, i) => i === 0 || id > c.ids[i - 1]!)), 'batches of at most 100, ids ascending');
    assert.ok(new Set(claims.map((c) => c.consumer)).size > 1, 'the work is shared between consumers');
    assert.match(result.stdout, /^jobs consumed = 20000$/m);
    assert.match(result.stdout, /^\| total     \|             0 \|$/m);
    const left = await db.rows('SELECT id FROM jobs');
    assert.equal(left.length, 0, 'the table is empty after the drain');
  });
}
