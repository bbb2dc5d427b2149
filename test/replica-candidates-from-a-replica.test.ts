import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test, type TestContext } from 'node:test';
import mysql from 'mysql2/promise';
import { prefill } from './helpers/queue-fixtures.js';
import { duplicates, parseClaimLines, runCli, startCli } from './helpers/run-cli.js';

// A private primary and a GTID replica of it (scripts/private-server.sh): candidates come from
// the replica, locking and claiming stay on the primary, and a replica that goes away costs
// nothing but a line.

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../scripts/private-server.sh', import.meta.url));
const SLOW_HANDLER = fileURLToPath(new URL('../../test/fixtures/one-ms-handler.mjs', import.meta.url));
const PRIMARY = 34_000 + 2 * Math.floor(Math.random() * 400);
const REPLICA = PRIMARY + 1;
const server = (...args: string[]) => run('bash', [SCRIPT, ...args], { env: { ...process.env, JOBQ_PRIVATE_SERVER_DIR: `/tmp/jobq-replica-test-${args[1]}` } });
const JOBS = 20_000;
let unavailable: string | undefined;

before(async () => {
  try {
    await server('start', String(PRIMARY));
    await server('start-replica', String(REPLICA), '--of', String(PRIMARY));
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '');
    if (!/not installed/.test(stderr)) throw error;
    unavailable = `no private server on this machine: ${stderr.trim()}`;
  }
});
after(async () => {
  if (unavailable !== undefined) return;
  await server('destroy', String(REPLICA));
  await server('destroy', String(PRIMARY));
});

const skipped = (t: TestContext) => (unavailable === undefined ? false : (t.skip(unavailable), true));
const urlOf = (port: number, database: string) => `mysql://root@127.0.0.1:${port}/${database}`;

async function query<T>(port: number, sql: string): Promise<T[]> {
  const connection = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', supportBigNumbers: true });
  try {
    return (await connection.query(sql))[0] as T[];
  } finally {
    await connection.end();
  }
}

/** `database` with `jobs` queued jobs on the primary, and the replica caught up with them. */
async function queuedOnBothSides(database: string, jobs = JOBS): Promise<void> {
  assert.equal((await runCli(['setup-tables', '--database-url', urlOf(PRIMARY, database)])).code, 0);
  await prefill(urlOf(PRIMARY, database), jobs);
  await replicaHas(database, jobs);
}

async function replicaHas(database: string, jobs: number): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    const rows = await query<{ n: number }>(REPLICA, `SELECT COUNT(*) AS n FROM ${database}.jobs`).catch(() => [{ n: -1 }]);
    if (Number(rows[0]!.n) === jobs) return;
    assert.ok(waited < 30_000, 'the replica caught up within 30 s');
    await sleep(100);
  }
}

const candidateReadsOnReplica = async () => Number((await query<{ Value: string }>(REPLICA, "SHOW GLOBAL STATUS LIKE 'Com_select'"))[0]!.Value);

async function statusCounts(database: string): Promise<{ total: number; done: number; claimedOnce: number }> {
  const [row] = await query<Record<string, string>>(PRIMARY, `SELECT COUNT(*) AS total, SUM(status = 'done') AS done, SUM(attempts = 1) AS claimedOnce FROM ${database}.jobs`);
  return { total: Number(row!.total), done: Number(row!.done), claimedOnce: Number(row!.claimedOnce) };
}

test('start-processing with --replica-url drains 20,000 jobs with candidates from the replica: every job claimed once', async (t) => {
  if (skipped(t)) return;
  const database = 'replica_drain';
  await queuedOnBothSides(database);
  const readsBefore = await candidateReadsOnReplica();
  const result = await runCli(['start-processing', '-g', '0', '-c', '4', '--until-empty', '--keep-done', '--database-url', urlOf(PRIMARY, database), '--replica-url', urlOf(REPLICA, database)]);
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /candidates from the primary/, 'the replica was used throughout');
  const claimed = parseClaimLines(result.stdout).flatMap((claim) => claim.ids);
  assert.deepEqual(duplicates(claimed), [], 'no id claimed twice');
  assert.equal(claimed.length, JOBS);
  assert.deepEqual(await statusCounts(database), { total: JOBS, done: JOBS, claimedOnce: JOBS });
  const reads = (await candidateReadsOnReplica()) - readsBefore;
  assert.ok(reads >= JOBS / 100, `the claims read their candidates on the replica (${reads} SELECTs there for ${JOBS / 100} or more claims)`);
});

test('the replica stopped in the middle of a jobq work drain: one line says so, the drain finishes from the primary', async (t) => {
  if (skipped(t)) return;
  const database = 'replica_lost';
  await queuedOnBothSides(database);
  const work = startCli(['work', '--handler', SLOW_HANDLER, '--once', '--consumers', '2', '--keep-done', '--database-url', urlOf(PRIMARY, database), '--replica-url', urlOf(REPLICA, database)]);
  for (;;) {
    const [row] = await query<{ n: number }>(PRIMARY, `SELECT COUNT(*) AS n FROM ${database}.jobs WHERE status = 'done'`);
    if (Number(row!.n) >= 2000) break;
    await sleep(50);
  }
  await server('stop', String(REPLICA));
  try {
    const result = await work.done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`^worker \\d+: candidates from the primary: the replica at 127\\.0\\.0\\.1:${REPLICA} is down`, 'm'));
    assert.equal(Number(/^jobs consumed = (\d+)$/m.exec(result.stdout)?.[1]), JOBS, 'every job handled once');
    assert.deepEqual(await statusCounts(database), { total: JOBS, done: JOBS, claimedOnce: JOBS });
  } finally {
    await server('start-replica', String(REPLICA), '--of', String(PRIMARY));
  }
});

test('a replica further behind than --replica-max-lag is bypassed with one line; the drain does not wait for it', async (t) => {
  if (skipped(t)) return;
  const database = 'replica_lagging';
  await queuedOnBothSides(database, 0);
  // Delayed replication: the replica applies each event 4 s after the primary wrote it.
  await delayReplication(4);
  try {
    await prefill(urlOf(PRIMARY, database), 5000);
    for (;;) {
      const [status] = await query<{ Seconds_Behind_Master: number | null }>(REPLICA, 'SHOW REPLICA STATUS');
      if (Number(status?.Seconds_Behind_Master ?? 0) >= 2) break;
      await sleep(100);
    }
    const result = await runCli(['work', '--handler', SLOW_HANDLER, '--once', '--keep-done', '--database-url', urlOf(PRIMARY, database), '--replica-url', urlOf(REPLICA, database)]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`^worker 1: candidates from the primary: the replica at 127\\.0\\.0\\.1:${REPLICA} lags \\d+ s behind the primary \\(more than 1 s\\)$`, 'm'));
    assert.equal(result.stderr.trim().split('\n').length, 1, `one line: ${result.stderr}`);
    assert.deepEqual(await statusCounts(database), { total: 5000, done: 5000, claimedOnce: 5000 });
  } finally {
    await delayReplication(0);
  }
});

async function delayReplication(seconds: number): Promise<void> {
  for (const sql of ['STOP SLAVE', `CHANGE MASTER TO MASTER_DELAY = ${seconds}`, 'START SLAVE']) await query(REPLICA, sql);
}
