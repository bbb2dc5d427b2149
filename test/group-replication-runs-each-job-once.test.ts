import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, test, type TestContext } from 'node:test';
import { LocalCluster } from './helpers/local-cluster.js';
import { clusterQueues, queueContract } from './helpers/queue-contract.js';
import { prefill } from './helpers/queue-fixtures.js';
import { runCli, startCli, type CliResult } from './helpers/run-cli.js';
import { ON_MARIADB } from './helpers/test-database.js';
import { waitUntil } from './helpers/wait.js';

// MySQL Group Replication with a member killed mid-drain. In a multi-primary group every member
// takes writes and row locks are local to a member, as on Galera: two members' claims can lock the
// same job, and certification refuses the second COMMIT (3101). In a single-primary group only the
// primary takes writes; when it dies the group elects another, and the secondaries stay read-only
// until then. Either way no job may be lost or handled twice.

const cluster = LocalCluster.groupReplication();
const NOOP_HANDLER = fileURLToPath(new URL('../../scripts/bench/noop-handler.mjs', import.meta.url));
const JOBS = 20_000;
/** Far above the lag of a loaded machine's secondary: the replica reads are what is tested here. */
const LAG_BOUND = ['--replica-max-lag', '60'];
// Longer than a failover (about 10 s here: the dead member is suspected, expelled, a primary
// elected), so that a worker waiting for the new primary still holds what it claimed. On a machine
// loaded by both suites at once a worker was cut off for longer: see assertHandledOnce.
const LEASE_SECONDS = 20;

after(async () => {
  if (!ON_MARIADB) await cluster.script('destroy');
});

/** The group running now: its mode, and why it could not start; undefined once a test has killed a member of it. */
let group: { mode: 'single-primary' | 'multi-primary'; unavailable: string | undefined } | undefined;

/** A group in `mode` with every member up: the running one if it is that, else one made anew. Returns why there is none. */
async function groupIn(mode: 'single-primary' | 'multi-primary'): Promise<string | undefined> {
  // Group Replication ships with MySQL; with the suite on MariaDB, Galera's tests take its place.
  if (ON_MARIADB) return 'Group Replication runs with MySQL; this run is on MariaDB';
  if (group?.mode !== mode) {
    await cluster.script('destroy');
    group = { mode, unavailable: await cluster.start(...(mode === 'multi-primary' ? ['--multi-primary'] : [])) };
  }
  return group.unavailable;
}

/** True (the test skipped) unless a group runs in `mode`; the test kills a member, so the next one gets a new group. */
async function skippedUnlessGroup(t: TestContext, mode: 'single-primary' | 'multi-primary'): Promise<boolean> {
  const unavailable = await groupIn(mode);
  group = undefined;
  if (unavailable !== undefined) return (t.skip(unavailable), true);
  return false;
}

/**
 * The fewest sessions any of `users` has on node N using `database`. A `jobq work --processes 2`
 * holds about 9 once its worker processes run; the first is its supervisor's, before they start.
 */
async function fewestSessions(node: number, users: readonly string[], database: string): Promise<number> {
  const connection = await cluster.connect(node);
  try {
    const [rows] = await connection.query('SELECT USER AS user, COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER IN (?) AND DB = ? GROUP BY USER', [users, database]);
    const counts = new Map((rows as Array<{ user: string; n: number }>).map((row) => [row.user, Number(row.n)]));
    return Math.min(...users.map((user) => counts.get(user) ?? 0));
  } finally {
    await connection.end();
  }
}
/** Worker processes at work: more sessions than the supervisor's alone. */
const WORKING_SESSIONS = 4;
/** Waits until a tenth of the jobs are done, read on member `node`: the drain is under way. */
const drainUnderWay = (node: number, database: string) =>
  waitUntil(async () => (await cluster.jobCounts(node, database)).done >= JOBS / 10, 'a tenth of the jobs are done', { everyMs: 20 });

const work = (url: string) =>
  startCli(['work', '--handler', NOOP_HANDLER, '--once', '--processes', '2', '--lease', String(LEASE_SECONDS), '--keep-done', '--database-url', url]);
const consumed = (result: CliResult) => Number(/^jobs consumed = (\d+)$/m.exec(result.stdout)?.[1] ?? 0);
const moved = (from: number) => new RegExp(`moved to the next server of the URL: from 127\\.0\\.0\\.1:${cluster.port(from)} `, 'm');

/**
 * After the drains: a claim whose COMMIT was answered by the killed member may have been certified
 * all the same, its jobs unknown to any worker until their lease runs out. A last drain through
 * the surviving `nodes` takes them then; returns how many it handled.
 */
async function drainAfterLease(database: string, nodes: readonly number[]): Promise<number> {
  const connection = await cluster.connect(nodes[0]!, database);
  try {
    await waitUntil(
      async () => {
        const [rows] = await connection.query("SELECT COUNT(*) AS n FROM jobs WHERE status = 'claimed' AND run_after > NOW(6)");
        return Number((rows as Array<{ n: number }>)[0]!.n) === 0;
      },
      'no lease is left running',
      { timeoutMs: (LEASE_SECONDS + 10) * 1000, everyMs: 500 },
    );
  } finally {
    await connection.end();
  }
  const last = await runCli(['work', '--handler', NOOP_HANDLER, '--once', '--keep-done', '--database-url', cluster.url(database, nodes)]);
  assert.equal(last.code, 0, last.stderr);
  return consumed(last);
}

/**
 * Asserts that the runs handled every job once, but for jobs whose lease ran out: a worker cut off
 * from the group for longer than the lease (a failover on a loaded machine) may have run a job
 * whose settle it could not commit, and the job is claimed and run again once its lease runs out,
 * as a lease is meant to do. Each lease that ran out allows one run more, never two at once: a job
 * run twice within one lease is the defect this looks for.
 */
async function assertHandledOnce(t: TestContext, handled: number, node: number, database: string): Promise<void> {
  const expired = await cluster.leaseExpiries(node, database);
  t.diagnostic(`${handled} runs of ${JOBS} jobs; ${expired} leases ran out`);
  assert.ok(handled >= JOBS && handled <= JOBS + expired, `the runs handled every job once, or again after its lease ran out: ${handled} runs, ${expired} leases ran out`);
}

// The contract's claims on every member of a multi-primary group, whose certification refuses the
// second of two COMMITs that claimed one job; the multi-primary test after it reuses the group.
let contractUnavailable: string | undefined;
before(async () => {
  contractUnavailable = await groupIn('multi-primary');
});
queueContract('a 3-member multi-primary group', { unavailable: () => contractUnavailable, freshQueue: clusterQueues(cluster) });

test('multi-primary: 20,000 jobs enqueued on node 1, jobq work on nodes 2 and 3, node 3 killed mid-drain: each job handled once, none left claimed', async (t) => {
  if (await skippedUnlessGroup(t, 'multi-primary')) return;
  const database = 'group_multi_primary';
  assert.equal((await runCli(['setup-tables', '--database-url', cluster.url(database, [1])])).code, 0);
  await prefill(cluster.url(database, [1]), JOBS);
  // Members apply what another committed a little later: a `--once` worker on a member that has
  // not yet would find nothing to do and end at once.
  await cluster.waitForJobs([2, 3], database, JOBS);

  // Each worker's URL names its member first and node 1 after it, where node 3's goes on.
  const onTwo = work(cluster.url(database, [2, 1]));
  const onThree = work(cluster.url(database, [3, 1]));
  // Killed once node 3's worker is connected there (on a busy machine it takes its time to start)
  // and the drain is under way.
  await waitUntil(async () => (await fewestSessions(3, ['root'], database)) >= WORKING_SESSIONS, "node 3's worker processes are connected");
  await drainUnderWay(1, database);
  await cluster.script('kill-node', '3');
  const results = [await onTwo.done, await onThree.done];
  for (const result of results) assert.equal(result.code, 0, result.stderr);
  assert.match(results[1]!.stderr, moved(3), "node 3's worker went on through node 1");

  const late = await drainAfterLease(database, [1, 2]);
  t.diagnostic(`node 2: ${consumed(results[0]!)}, node 3 then 1: ${consumed(results[1]!)}, after the lease: ${late}`);
  await assertHandledOnce(t, consumed(results[0]!) + consumed(results[1]!) + late, 1, database);
  await cluster.assertJobCounts(1, database, { total: JOBS, done: JOBS, kept: { waiting: 0, done: JOBS, failed: 0 } });
});

test('single-primary: the primary killed in the middle of a drain by two jobq work processes: they go on with the new primary through a URL listing every member, each job handled once', async (t) => {
  if (await skippedUnlessGroup(t, 'single-primary')) return;
  const database = 'group_single_primary';
  const url = cluster.url(database);
  assert.equal((await runCli(['setup-tables', '--database-url', url])).code, 0);
  await prefill(url, JOBS);
  assert.equal((await runCli(['setup-tables', '--database-url', cluster.url('group_replica_reads')])).code, 0);
  await prefill(cluster.url('group_replica_reads'), 10_000);
  await cluster.waitForJobs([3], 'group_replica_reads', 10_000);
  // Node 1, which started the group, is its primary; a URL naming a secondary alone is refused.
  const secondary = await runCli(['stats', '--database-url', cluster.url(database, [2])]);
  assert.equal(secondary.code, 3, secondary.stderr);
  assert.match(secondary.stderr, new RegExp(`^jobq: the server at 127\\.0\\.0\\.1:${cluster.port(2)} is read-only \\(a Group Replication secondary, or a replica\\); point --database-url at the primary`));
  assert.match((await runCli(['stats', '--database-url', cluster.url(database, [2, 1])])).stdout, new RegExp(`at 127\\.0\\.0\\.1:${cluster.port(1)}`), 'the next member of the URL, the primary, is used');
  // Candidates may come from a secondary: it is a replica whose lag the group's tables tell. The
  // bound is loose: a loaded machine's secondary falls a second or two behind, and the bound's own
  // test is replica-candidates-from-a-replica.
  const readsBefore = await cluster.statusSum([3], ['Com_select']);
  const fromSecondary = await runCli(['work', '--handler', NOOP_HANDLER, '--once', '--database-url', cluster.url('group_replica_reads'), '--replica-url', cluster.url('group_replica_reads', [3]), ...LAG_BOUND]);
  assert.equal(fromSecondary.code, 0, fromSecondary.stderr);
  assert.doesNotMatch(fromSecondary.stderr, /candidates from the primary/, 'the secondary was used throughout');
  assert.ok((await cluster.statusSum([3], ['Com_select'])) - readsBefore >= 40, 'the claims read their candidates on the secondary');

  // Each worker logs in as a user of its own, so that the primary is killed once both are connected.
  const users = ['jobq_worker_a', 'jobq_worker_b'];
  const primary = await cluster.connect(1);
  try {
    for (const user of users) {
      await primary.query(`CREATE USER ${user}@'%' IDENTIFIED BY ''`);
      await primary.query(`GRANT ALL ON ${database}.* TO ${user}@'%'`);
    }
  } finally {
    await primary.end();
  }
  const workers = users.map((user) => work(url.replace('mysql://root@', `mysql://${user}@`)));
  await waitUntil(async () => (await fewestSessions(1, users, database)) >= WORKING_SESSIONS, "both workers' processes are connected to the primary");
  await drainUnderWay(1, database);
  await cluster.script('kill-node', '1');
  const results = [];
  for (const worker of workers) results.push(await worker.done);
  for (const result of results) {
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, moved(1), 'the worker found the new primary');
  }

  const late = await drainAfterLease(database, [2, 3]);
  t.diagnostic(`the workers: ${results.map(consumed).join(' and ')}, after the lease: ${late}`);
  await assertHandledOnce(t, results.reduce((sum, result) => sum + consumed(result), 0) + late, 2, database);
  await cluster.assertJobCounts(2, database, { total: JOBS, done: JOBS, kept: { waiting: 0, done: JOBS, failed: 0 } });
});
