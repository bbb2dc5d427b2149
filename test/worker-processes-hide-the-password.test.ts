import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { childProcesses } from './helpers/processes.js';
import { startCli } from './helpers/run-cli.js';
import { createTestDatabase, SERVER_URL, type TestDatabase } from './helpers/test-database.js';
import { prefill } from './helpers/queue-fixtures.js';

const HANDLER = fileURLToPath(new URL('../../test/fixtures/email-handlers.mjs', import.meta.url));

let db: TestDatabase;
const user = `jobq_pw_${randomBytes(4).toString('hex')}`;
const password = `s3cret-${randomBytes(8).toString('hex')}`;
let url: string;
before(async () => {
  db = await createTestDatabase();
  await prefill(db.url, 1000);
  await db.admin.query('CREATE USER ?@? IDENTIFIED BY ?', [user, '%', password]);
  await db.admin.query(`GRANT ALL ON \`${db.name}\`.* TO ?@?`, [user, '%']);
  const server = new URL(SERVER_URL);
  url = `mysql://${user}:${password}@${server.host}/${db.name}`;
});
after(async () => {
  await db.admin.query('DROP USER IF EXISTS ?@?', [user, '%']);
  await db.drop();
});

/** The command line of the process and of each of its children, as `ps` shows them. */
function commandLines(pid: number): string[] {
  return [readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '), ...childProcesses(pid).map((child) => child.cmdline)];
}

for (const [name, args, children] of [
  ['work --consumers 2 (the old name of --processes)', ['work', '--handler', HANDLER, '--consumers', '2'], 2],
  ['start-processing', ['start-processing', '-g', '1', '-c', '2', '-q'], 3],
] as const) {
  test(`${name} with a password in $JOBQ_DATABASE_URL: no process shows it on its command line`, async () => {
    const run = startCli([...args], { JOBQ_DATABASE_URL: url });
    let lines: string[] = [];
    for (let waited = 0; lines.length < 1 + children && waited < 15_000; waited += 100) {
      await sleep(100);
      lines = commandLines(run.pid);
    }
    run.kill('SIGINT');
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(lines.length, 1 + children, `the workers ran: ${lines.join('\n')}`);
    for (const line of lines) assert.ok(!line.includes(password), `the password is on a command line: ${line}`);
    assert.ok(!result.stdout.includes(password) && !result.stderr.includes(password), 'nor in the output');
  });
}
