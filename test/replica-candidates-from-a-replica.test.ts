import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { PrivateServer, privatePort } from './helpers/private-server.js';
import { prefill } from './helpers/queue-fixtures.js';
import { duplicates, parseClaimLines, runCli, startCli } from './helpers/run-cli.js';
import { ON_MARIADB } from './helpers/test-database.js';
import { CREATE_RUNS_TABLE_SQL, mostAtOnce, type Run } from './helpers/timed-runs.js';
import { JobQueue } from '../src/index.js';

// A private primary and a GTID replica of it (scripts/private-server.sh or mysql-server.sh):
// candidates come from the replica, locking and claiming stay on the primary (so do the reads of
// limited kinds), and a replica that goes away costs nothing but a line.

const SLOW_HANDLER = fileURLToPath(new URL('../../test/fixtures/one-ms-handler.mjs', import.meta.url));
const TIMED_HANDLER = fileURLToPath(new URL('../../test/fixtures/timed-runs-handler.mjs', import.meta.url));
const primary = new PrivateServer(privatePort(11_000));
const replica = new PrivateServer(primary.port + 1);
const JOBS = 20_000;
// The replica may fall a second or two behind a drain on a loaded machine (MySQL counts its lag in
// whole seconds): with a bound of 10 s, the drains below are about candidates coming from the
// replica, not about its lag, which the test of a replica far behind is about.
const LAG_BOUND = ['--replica-max-lag', '10'];

before(async () => {
  await primary.start();
  await replica.startReplicaOf(primary);
});
after(async () => {
  await replica.destroy();
  await primary.destroy();
});

/** `database` with `jobs` queued jobs on the primary, and the replica caught up with them. */
async function queuedOnBothSides(database: string, jobs = JOBS): Promise<void> {
  assert.equal((await runCli(['setup-tables', '--database-url', primary.url(database)])).code, 0);
  await prefill(primary.url(database), jobs);
  await replicaHas(database, jobs);
}

async function replicaHas(database: string, jobs: number): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    const rows = await replica.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${database}.jobs`).catch(() => [{ n: -1 }]);
    if (Number(rows[0]!.n) === jobs) return;
    assert.ok(waited < 30_000, 'the replica caught up within 30 s');
    await sleep(100);
  }
}

const candidateReadsOnReplica = async () => Number((await replica.query<{ Value: string }>("SHOW GLOBAL STATUS LIKE 'Com_select'"))[0]!.Value);

async function statusCounts(database: string): Promise<{ total: number; done: number; claimedOnce: number }> {
  const [row] = await primary.query<Record<string, string>>(`SELECT COUNT(*) AS total, SUM(status = 'done') AS done, SUM(attempts = 1) AS claimedOnce FROM ${database}.jobs`);
  return { total: Number(row!.total), done: Number(row!.done), claimedOnce: Number(row!.claimedOnce) };
}

test('start-processing with --replica-url drains 20,000 jobs with candidates from the replica: every job claimed once', async () => {
  const database = 'replica_drain';
  await queuedOnBothSides(database);
  const readsBefore = await candidateReadsOnReplica();
  const result = await runCli(['start-processing', '-g', '0', '-c', '4', '--until-empty', '--keep-done', '--database-url', primary.url(database), '--replica-url', replica.url(database), ...LAG_BOUND]);
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /candidates from the primary/, 'the replica was used throughout');
  const claimed = parseClaimLines(result.stdout).flatMap((claim) => claim.ids);
  assert.deepEqual(duplicates(claimed), [], 'no id claimed twice');
  assert.equal(claimed.length, JOBS);
  assert.deepEqual(await statusCounts(database), { total: JOBS, done: JOBS, claimedOnce: JOBS });
  const reads = (await candidateReadsOnReplica()) - readsBefore;
  assert.ok(reads >= JOBS / 100, `the claims read their candidates on the replica (${reads} SELECTs there for ${JOBS / 100} or more claims)`);
});

test('a kind limited to 3 with candidates from the replica: 2 jobq work processes at concurrency 10 never run more than 3 of it at once, every job once', async () => {
  const database = 'replica_limited';
  assert.equal((await runCli(['setup-tables', '--database-url', primary.url(database)])).code, 0);
  await primary.query(`CREATE TABLE ${database}.${CREATE_RUNS_TABLE_SQL.replace('CREATE TABLE IF NOT EXISTS ', '')}`);
  const queue = await JobQueue.open(primary.url(database));
  try {
    await queue.setLimit('pdf', { concurrency: 3 });
    await queue.enqueueMany(Array.from({ length: 60 }, () => ({ kind: 'pdf' })));
  } finally {
    await queue.close();
  }
  await replicaHas(database, 60);
  // Runs of 150 ms: with 20 ms ones, a turn slowed by a whole CI run's load (two test files per
  // server beside the replica) let only 2 overlap, and the limit was never reached.
  const env = { JOBQ_DATABASE_URL: primary.url(database), RUN_MS: '150' };
  const result = await runCli(['work', '--handler', TIMED_HANDLER, '--once', '--processes', '2', '--concurrency', '10', '--database-url', primary.url(database), '--replica-url', replica.url(database), ...LAG_BOUND], env);
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /candidates from the primary/, 'the replica was used throughout');
  const runs = await primary.query<Run>(`SELECT job_id, kind, pid, started, ended FROM ${database}.runs ORDER BY run`);
  assert.equal(new Set(runs.map((run) => Number(run.job_id))).size, 60, 'every job ran');
  assert.equal(runs.length, 60, 'none ran twice');
  assert.equal(mostAtOnce(runs), 3, 'the limit held and was reached');
});

test('the replica stopped in the middle of a jobq work drain: one line says so, the drain finishes from the primary', async () => {
  const database = 'replica_lost';
  await queuedOnBothSides(database);
  const work = startCli(['work', '--handler', SLOW_HANDLER, '--once', '--processes', '2', '--keep-done', '--database-url', primary.url(database), '--replica-url', replica.url(database), ...LAG_BOUND]);
  for (;;) {
    const [row] = await primary.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${database}.jobs WHERE status = 'done'`);
    if (Number(row!.n) >= 2000) break;
    await sleep(50);
  }
  await replica.stop();
  try {
    const result = await work.done;
    assert.equal(result.code, 0, result.stderr);
    // A server shutting down stops replicating before it stops answering: a worker's check may see
    // either, and says which; one line a worker, not one a claim.
    const lines = result.stderr.split('\n').filter((line) => line.includes('candidates from the primary'));
    assert.ok(lines.length >= 1 && lines.length <= 2, `one line for each of the 2 workers at most:\n${result.stderr}`);
    for (const line of lines) assert.match(line, new RegExp(`^worker \\d+: candidates from the primary: the replica at 127\\.0\\.0\\.1:${replica.port} is (down|not replicating)`));
    assert.equal(new Set(lines.map((line) => line.split(':')[0])).size, lines.length, 'no worker said it twice');
    assert.equal(Number(/^jobs consumed = (\d+)$/m.exec(result.stdout)?.[1]), JOBS, 'every job handled once');
    assert.deepEqual(await statusCounts(database), { total: JOBS, done: JOBS, claimedOnce: JOBS });
  } finally {
    await replica.startReplicaOf(primary);
  }
});

test('a replica further behind than --replica-max-lag is bypassed with one line; the drain does not wait for it', async () => {
  const database = 'replica_lagging';
  await queuedOnBothSides(database, 0);
  // Delayed replication: the replica applies each event 30 s after the primary wrote it, so it
  // lags throughout the drain, however slow a loaded machine makes that (with 4 s, a 15 s drain
  // saw it catch up and fall behind again: three lines, each right).
  await delayReplication(30);
  try {
    await prefill(primary.url(database), 5000);
    for (;;) {
      const [status] = await replica.query<Record<string, number | null>>('SHOW REPLICA STATUS');
      if (Number(status?.Seconds_Behind_Master ?? status?.Seconds_Behind_Source ?? 0) >= 2) break;
      await sleep(100);
    }
    const result = await runCli(['work', '--handler', SLOW_HANDLER, '--once', '--keep-done', '--database-url', primary.url(database), '--replica-url', replica.url(database)]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`^worker 1: candidates from the primary: the replica at 127\\.0\\.0\\.1:${replica.port} lags \\d+ s behind the primary \\(more than 1 s\\)$`, 'm'));
    assert.equal(result.stderr.trim().split('\n').length, 1, `one line: ${result.stderr}`);
    assert.deepEqual(await statusCounts(database), { total: 5000, done: 5000, claimedOnce: 5000 });
  } finally {
    await delayReplication(0);
  }
});

async function delayReplication(seconds: number): Promise<void> {
  // MySQL 8.4 dropped MariaDB's CHANGE MASTER words.
  const change = ON_MARIADB ? `CHANGE MASTER TO MASTER_DELAY = ${seconds}` : `CHANGE REPLICATION SOURCE TO SOURCE_DELAY = ${seconds}`;
  for (const sql of ['STOP REPLICA', change, 'START REPLICA']) await replica.query(sql);
}
