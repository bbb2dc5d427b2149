import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from './run-cli.js';
import { databaseForTests, prefill } from './queue-fixtures.js';
import type { TestDatabase } from './test-database.js';

/** A `jobq` command that must be refused: its arguments, its standard input, its exit code, and its one line. */
export interface Refusal {
  name: string;
  args: () => string[];
  input?: string | Buffer;
  code: number;
  stderr: RegExp;
}

/** The database the refusals run against: 10 waiting jobs, and a table `not_jobs` that jobq did not make. */
export const databaseForRefusals = (): TestDatabase =>
  databaseForTests(async (db) => {
    await prefill(db.url, 10);
    await db.admin.query('CREATE TABLE not_jobs (id INT PRIMARY KEY, note TEXT)');
  });

/** A test for each refusal: the exit code, one line on stderr that matches, no stack trace, nothing on stdout, no row of the jobs table changed. */
export function refusedCleanly(db: TestDatabase, refusals: readonly Refusal[]): void {
  for (const { name, args, input, code, stderr } of refusals) {
    test(`${name}: one line, exit code ${code}, no row changed`, async () => {
      const before = await db.rows('SELECT id, status, attempts FROM jobs ORDER BY id');
      const result = await runCli(args(), {}, input);
      assert.equal(result.code, code, result.stderr);
      assert.match(result.stderr.trimEnd(), stderr);
      const lines = result.stderr.trimEnd().split('\n');
      assert.ok(lines.length <= 3 && !/\n\s+at /.test(result.stderr), `no stack trace: ${result.stderr}`);
      assert.equal(result.stdout, '');
      assert.deepEqual(await db.rows('SELECT id, status, attempts FROM jobs ORDER BY id'), before);
    });
  }
}
