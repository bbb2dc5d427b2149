import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { ON_MARIADB } from './helpers/test-database.js';

const JOBQ = fileURLToPath(new URL('../../bin/jobq.js', import.meta.url));
const context = queueForTests();
const JOBS = 5000;
const lines = () => Array.from({ length: JOBS }, (_, n) => `{"kind": "bulk", "payload": {"n": ${n}}}\n`).join('');

/**
 * Runs `jobq args` on a pseudo-terminal (util-linux `script`), with standard input from `inputFile`,
 * as a user at a terminal would: not in CI and with colours allowed, unless `env` says otherwise.
 * Returns what the terminal showed.
 */
async function onTerminal(args: string[], inputFile = '/dev/null', env: Record<string, string> = {}): Promise<string> {
  const { CI: _ci, NO_COLOR: _noColor, ...inherited } = process.env;
  const command = [process.execPath, JOBQ, ...args].map((word) => `'${word}'`).join(' ');
  const { stdout } = await promisify(execFile)('script', ['-qefc', `${command} < '${inputFile}'`, '/dev/null'], { env: { ...inherited, ...env } });
  return stdout;
}

/** A file of JOBS job lines, deleted after the test. */
function jobLinesFile(t: { after: (fn: () => void) => void }): string {
  const file = `${tmpdir()}/jobq-progress-${process.pid}-${Math.random().toString(36).slice(2)}.jsonl`;
  writeFileSync(file, lines());
  t.after(() => rmSync(file, { force: true }));
  return file;
}

/** The progress lines a terminal was sent: each starts with a carriage return and ends by clearing the rest of the line. */
const progressLines = (shown: string) => [...shown.matchAll(/\r([^\r\n\x1b]*)\x1b\[K/g)].map((match) => match[1]!).filter((line) => line !== '');

/** The number in a progress line after `before`: "queued 1,000" -> 1000. */
const numberAfter = (line: string, before: string) => Number(new RegExp(`${before}([\\d,]+)`).exec(line)![1]!.replaceAll(',', ''));

test('enqueue --stdin and prune show their progress and what is left on a terminal, on one line rewritten in place, then their line', async (t) => {
  const input = jobLinesFile(t);
  const queued = await onTerminal(['enqueue', '--stdin', '--database-url', context.db.url], input);
  const shown = progressLines(queued);
  assert.ok(shown.length >= 1, `a progress line: ${JSON.stringify(queued)}`);
  for (const line of shown) {
    assert.match(line, /^queued [\d,]+ \([\d,]+\/s\), about [\d,]+ left$/);
    // Left is estimated from the bytes of the file read so far; its lines are all about as long.
    assert.ok(Math.abs(numberAfter(line, 'queued ') + numberAfter(line, 'about ') - JOBS) <= JOBS / 20, `queued and about left add up to about the lines of the file: ${line}`);
  }
  assert.match(queued, /queued 5000 jobs \(ids \d+\.\.\d+\)\r?\n$/, 'the last line as without a terminal');

  await context.db.admin.query("UPDATE jobs SET status = 'done', run_after = NOW(6) - INTERVAL 8 DAY");
  const pruned = await onTerminal(['prune', '--done-older-than', '7d', '--database-url', context.db.url]);
  assert.ok(progressLines(pruned).length >= 1, JSON.stringify(pruned));
  for (const line of progressLines(pruned)) {
    assert.match(line, /^pruned [\d,]+ \([\d,]+\/s\), [\d,]+ left$/);
    assert.equal(numberAfter(line, 'pruned ') + numberAfter(line, '\\), '), JOBS, `pruned and left add up to the jobs to prune: ${line}`);
  }
  assert.match(pruned, /pruned 5000 done, 0 failed and 0 cancelled jobs in 5 chunks\r?\n$/);
});

test('piped, in CI or with NO_COLOR: no progress line, only the last one', async (t) => {
  const plain = await runCli(['enqueue', '--stdin', '--database-url', context.db.url], {}, lines());
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stderr, '', 'nothing on standard error when it is not a terminal');
  assert.match(plain.stdout, /^queued 5000 jobs \(ids \d+\.\.\d+\)\n$/);
  const input = jobLinesFile(t);
  for (const variable of ['CI', 'NO_COLOR']) {
    const shown = await onTerminal(['enqueue', '--stdin', '--database-url', context.db.url], input, { [variable]: '1' });
    assert.deepEqual(progressLines(shown), [], `no progress with ${variable} set`);
    assert.match(shown, /queued 5000 jobs/);
  }
});

test('a quiet drain by start-processing shows jobs consumed, the rate and what is left; with its claim lines, none', async () => {
  await context.db.admin.query('DELETE FROM jobs');
  await context.queue.recount();
  await context.queue.enqueueMany(Array.from({ length: JOBS }, (_, n) => ({ kind: 'drain', payload: { n } })));
  const drain = await onTerminal(['start-processing', '-g', '0', '-c', '2', '--until-empty', '-q', '--database-url', context.db.url]);
  const shown = progressLines(drain);
  assert.ok(shown.length >= 1, JSON.stringify(drain));
  for (const line of shown) assert.match(line, /^consumed [\d,]+ \([\d,]+\/s\)(, [\d,]+ left)?$/);
  assert.ok(shown.every((line) => !/left/.test(line) || Number(/^consumed ([\d,]+)/.exec(line)![1]!.replaceAll(',', '')) + Number(/([\d,]+) left$/.exec(line)![1]!.replaceAll(',', '')) === JOBS), `consumed and left add up to the jobs queued: ${shown.join(' | ')}`);
  assert.match(drain, /jobs consumed = 5000/);

  await context.queue.enqueueMany(Array.from({ length: 100 }, () => ({ kind: 'drain' })));
  const loud = await onTerminal(['start-processing', '-g', '0', '-c', '2', '--until-empty', '--database-url', context.db.url]);
  assert.deepEqual(progressLines(loud), [], 'the claim lines are its progress');
  assert.match(loud, /jobs consumed = 100/);
});

test('setup-tables partitioning a table with rows shows the step, how far the server says it is and the time', async () => {
  await context.db.admin.query('DELETE FROM jobs');
  // 200,000 rows, from a cross join of digits: partitioning copies them for a second or more.
  const digits = 'SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9';
  await context.db.admin.query(
    `INSERT INTO jobs (given_key, kind, run_after) SELECT CONCAT('k', a.d, b.d, c.d, d.d, e.d, f.d), 'bulk', NOW(6)
       FROM (${digits}) a, (${digits}) b, (${digits}) c, (${digits}) d, (${digits}) e, (${digits}) f WHERE a.d < 2`,
  );
  const shown = await onTerminal(['setup-tables', '--partitions', '4', '--database-url', context.db.url]);
  const steps = progressLines(shown);
  assert.ok(steps.length >= 1, `a progress line: ${JSON.stringify(shown)}`);
  for (const line of steps) assert.match(line, /^setting up \((recording the job keys|partitioning)\): (\d+ % in )?\d+ s(, about \d+ s left)?$/);
  // MariaDB reports how far an ALTER TABLE is; MySQL only with performance_schema's stage events on.
  if (ON_MARIADB) assert.ok(steps.some((line) => / \d+ % in \d+ s, about \d+ s left$/.test(line)), `a share done: ${steps.join(' | ')}`);
  assert.match(shown, /table jobs: partitioned by HASH \(id\) into 4 partitions\r?\n$/);
});
