import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { mostAtOnce, mostClaimedWithin, timedRuns } from './helpers/timed-runs.js';
import { waitUntil } from './helpers/wait.js';

// Groups (a tenant, an account) share a kind: claims take its jobs round-robin between groups,
// with or without limits, and a limit per group holds for every worker process at once.

const context = queueForTests();
const { noRuns, runsOf, work } = timedRuns(context);

test('a limit of 1 per group, 4 worker processes at concurrency 10: no two jobs of a group at once, different groups side by side, every job once', async () => {
  const { queue, db } = context;
  await noRuns();
  const set = await runCli(['limit', 'set', '--kind', 'import', '--group-concurrency', '1', '--database-url', db.url]);
  assert.equal(set.stdout, 'kind "import": at most 1 running at once in each group\n', set.stderr);
  const groups = Array.from({ length: 12 }, (_, g) => `acct-${g}`);
  await queue.enqueueMany(groups.flatMap((group) => Array.from({ length: 6 }, (_, n) => ({ kind: 'import', group, payload: { n } }))));

  // The first worker up holds at most 10 groups: another takes the other two.
  const workers = Array.from({ length: 4 }, () => work(['--once'], { UNTIL_PROCESSES: '2' }));
  for (const { done } of workers) assert.equal((await done).code, 0);

  const runs = await runsOf('import');
  assert.equal(new Set(runs.map((run) => Number(run.job_id))).size, 72, 'every job ran');
  assert.equal(runs.length, 72, 'none ran twice');
  for (const group of groups) assert.equal(mostAtOnce(runs.filter((run) => run.job_group === group)), 1, `jobs of ${group} overlapped`);
  assert.ok(mostAtOnce(runs) >= 6, `jobs of different groups ran side by side (at most ${mostAtOnce(runs)} at once)`);
  assert.ok(new Set(runs.map((run) => run.pid)).size > 1, 'in several processes');
  assert.deepEqual(await queue.limits(), [{ kind: 'import', concurrency: null, groupConcurrency: 1, rate: null, groupRate: null, running: 0 }]);
  await queue.removeLimit('import');
});

test('a rate of 5 per second per group, 3 groups of 15 jobs, 2 worker processes: never more than 5 of a group claimed in any one second, the groups side by side', async () => {
  const { queue, db } = context;
  await noRuns();
  await queue.setLimit('sync', { groupRate: { jobs: 5, perSeconds: 1 } });
  const groups = ['acct-a', 'acct-b', 'acct-c'];
  await queue.enqueueMany(groups.flatMap((group) => Array.from({ length: 15 }, () => ({ kind: 'sync', group }))));
  const workers = Array.from({ length: 2 }, () => work(['--once'], { RUN_MS: '10' }));
  for (const { done } of workers) assert.equal((await done).code, 0);
  const runs = await runsOf('sync');
  assert.equal(new Set(runs.map((run) => Number(run.job_id))).size, 45, 'every job ran, once');
  assert.equal(runs.length, 45);
  for (const group of groups) {
    const most = await mostClaimedWithin(db, 1, 'sync', group);
    assert.ok(most <= 5, `${most} jobs of ${group} claimed within one second`);
  }
  const most = await mostClaimedWithin(db, 1, 'sync');
  assert.ok(most > 5, `the groups ran side by side: at most ${most} claimed in a second`);
  await queue.removeLimit('sync');
  await db.admin.query("DELETE FROM jobs WHERE kind = 'sync'");
});

test('fair share without a limit: group A with 5,000 jobs queued first, then group B with 50; every job of B starts before the 200th of A', async () => {
  const { queue } = context;
  await noRuns();
  await queue.enqueueMany(Array.from({ length: 5000 }, (_, n) => ({ kind: 'sync', group: 'A', payload: { n } })));
  await queue.enqueueMany(Array.from({ length: 50 }, (_, n) => ({ kind: 'sync', group: 'B', payload: { n } })));
  // The worker is stopped once B's jobs have all run; A's rest stays queued.
  const worker = work([], { RUN_MS: '2' });
  try {
    await waitUntil(async () => (await runsOf('sync')).filter((run) => run.job_group === 'B').length === 50, 'every job of B has run', { timeoutMs: 60_000 }).catch(async (error) => {
      worker.kill('SIGTERM');
      const left = await context.db.rows('SELECT job_group, status, run_after > NOW(6) AS later, COUNT(*) AS n FROM jobs GROUP BY 1, 2, 3');
      throw new Error(`${(error as Error).message}: the worker ended ${JSON.stringify(await worker.done)}; jobs by group and status: ${JSON.stringify(left)}`);
    });
    const runs = await runsOf('sync');
    const lastOfB = runs.findLastIndex((run) => run.job_group === 'B');
    const ofABefore = runs.slice(0, lastOfB).filter((run) => run.job_group === 'A').length;
    assert.ok(ofABefore < 200, `${ofABefore} jobs of A started before the last of B`);
  } finally {
    worker.kill('SIGTERM');
    await worker.done;
  }
});

test('a group that appears while a worker drains another is claimed from within a claim or two', async () => {
  const { queue, db } = context;
  await noRuns();
  await queue.enqueueMany(Array.from({ length: 3000 }, (_, n) => ({ kind: 'feed', group: 'A', payload: { n } })));
  const worker = work([], { RUN_MS: '2' });
  try {
    // By now the worker's reads of the kind have come round to A alone many times over.
    await waitUntil(async () => (await runsOf('feed')).length >= 300, 'A is being drained', { timeoutMs: 60_000 });
    const [{ queued }] = (await db.rows<{ queued: string }>('SELECT CAST(NOW(6) AS CHAR) AS queued')) as [{ queued: string }];
    await queue.enqueueMany(Array.from({ length: 20 }, (_, n) => ({ kind: 'feed', group: 'B', payload: { n } })));
    await waitUntil(async () => (await runsOf('feed')).some((run) => run.job_group === 'B'), 'a job of B has run', { timeoutMs: 60_000 });
    // A claim is known by its time: every job it took has it.
    const claimsOf = (group: string) => db.rows<{ claimed: string }>("SELECT DISTINCT CAST(claimed AS CHAR) AS claimed FROM runs WHERE kind = 'feed' AND job_group = ? AND claimed > ? ORDER BY 1", [group, queued]);
    const firstOfB = (await claimsOf('B'))[0]!.claimed;
    const ofAOnly = (await claimsOf('A')).filter((claim) => claim.claimed < firstOfB).length;
    assert.ok(ofAOnly <= 2, `${ofAOnly} claims took jobs of A alone after B was queued`);
  } finally {
    worker.kill('SIGTERM');
    await worker.done;
    await db.admin.query("DELETE FROM jobs WHERE kind = 'feed'");
  }
});

test('groups from the command line and from --stdin lines; bad groups: one line, exit code 2, nothing queued', async () => {
  const { queue, db } = context;
  const one = await runCli(['enqueue', '--kind', 'report', '--group', 'acct-7', '--database-url', db.url]);
  assert.equal(one.code, 0, one.stderr);
  const lines = ['{"kind": "report", "group": "acct-8"}', '{"kind": "report"}'].join('\n');
  const many = await runCli(['enqueue', '--stdin', '--group', 'acct-9', '--database-url', db.url], {}, lines);
  assert.equal(many.code, 0, many.stderr);
  const stored = await db.rows<{ job_group: string | null }>("SELECT job_group FROM jobs WHERE kind = 'report' ORDER BY id");
  assert.deepEqual(stored.map((row) => row.job_group), ['acct-7', 'acct-8', 'acct-9']);

  const before = await db.rows<{ n: number }>('SELECT COUNT(*) AS n FROM jobs');
  const cases: Array<[string[], string | undefined, RegExp]> = [
    [['enqueue', '--kind', 'report', '--group', 'g'.repeat(65)], undefined, /^jobq: the job: group must be a string of 1-64 characters, not "g{65}"$/m],
    [['enqueue', '--group', 'acct-1'], undefined, /^jobq: the job: a job with a group needs a kind: groups share out the jobs of a kind$/m],
    [['enqueue', '--stdin'], '{"kind": "report", "group": ""}', /^jobq: line 1: group must be a string of 1-64 characters, not ""/m],
    [['enqueue', '--stdin'], '{"kind": "report", "group": 42}', /^jobq: line 1: group must be a string of 1-64 characters, not 42/m],
  ];
  for (const [args, input, stderr] of cases) {
    const result = await runCli([...args, '--database-url', db.url], {}, input);
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, stderr);
  }
  await assert.rejects(queue.enqueue({ kind: 'report', group: 'x'.repeat(65) }), /^JobqError: job: group must be a string of 1-64 characters/);
  assert.deepEqual(await db.rows<{ n: number }>('SELECT COUNT(*) AS n FROM jobs'), before);
});
