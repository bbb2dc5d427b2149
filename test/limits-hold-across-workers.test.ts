import assert from 'node:assert/strict';
import { test } from 'node:test';
import { noKindRules } from '../src/claim/kind-rules.js';
import { TotalsTally } from '../src/claim/running-totals.js';
import { claimTurn } from '../src/claim/turn.js';
import { quoteIdentifier } from '../src/config/identifiers.js';
import { parseDatabaseUrl } from '../src/config/database-url.js';
import { QueueMetrics } from '../src/dashboard/metrics.js';
import { Database } from '../src/db/database.js';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { mostAtOnce, mostClaimedWithin, timedRuns } from './helpers/timed-runs.js';
import { waitUntil } from './helpers/wait.js';

// A limit on a kind holds for every worker process at once: the handlers' own start and end
// times, by the server's clock, never show more of the kind running than the limit.

const context = queueForTests();
const { noRuns, runsOf, work } = timedRuns(context);

test('4 worker processes at concurrency 10, 300 jobs of a kind limited to 3: never more than 3 of it at once, the limit reached, every job once; another kind runs beside it unheld', async () => {
  const { queue, db } = context;
  await noRuns();
  const set = await runCli(['limit', 'set', '--kind', 'pdf', '--concurrency', '3', '--database-url', db.url]);
  assert.equal(set.stdout, 'kind "pdf": at most 3 running at once\n', set.stderr);
  await queue.enqueueMany([...Array.from({ length: 300 }, (_, n) => ({ kind: 'pdf', payload: { n } })), ...Array.from({ length: 150 }, (_, n) => ({ kind: 'email', payload: { n } }))]);

  const workers = Array.from({ length: 4 }, () => work(['--once']));
  for (const { done } of workers) assert.equal((await done).code, 0);

  const pdf = await runsOf('pdf');
  assert.equal(new Set(pdf.map((run) => Number(run.job_id))).size, 300, 'every pdf job ran');
  assert.equal(pdf.length, 300, 'none ran twice');
  assert.equal(mostAtOnce(pdf), 3, 'the limit held and was reached');
  assert.ok(new Set(pdf.map((run) => run.pid)).size > 1, 'the limited kind ran in several processes');
  assert.ok(mostAtOnce(await runsOf('email')) > 3, 'the other kind was not held to the limit');
  assert.deepEqual(await queue.limits(), [{ kind: 'pdf', concurrency: 3, groupConcurrency: null, rate: null, groupRate: null, running: 0 }]);
});

test('a worker killed with SIGKILL holding limited jobs: the others take its slots only once its leases have run out', async () => {
  const { queue, db } = context;
  await noRuns();
  await queue.setLimit('pdf', { concurrency: 3 });
  await queue.enqueueMany(Array.from({ length: 20 }, () => ({ kind: 'pdf' })));
  const hung = work(['--lease', '4'], { RUN_MS: '600000' });
  await waitUntil(async () => (await runsOf('pdf')).length === 3, 'the first worker runs 3 jobs');
  hung.kill('SIGKILL');
  await hung.done;
  const leases = await db.rows<{ id: number; leaseEnd: string }>("SELECT id, run_after AS leaseEnd FROM jobs WHERE kind = 'pdf' AND status = 'claimed'");
  const [{ now }] = await db.rows<{ now: string }>('SELECT NOW(6) AS now');
  assert.equal(leases.length, 3);
  assert.ok(leases.every(({ leaseEnd }) => leaseEnd > now), `the killed worker's leases are still running (${JSON.stringify(leases)} at ${now})`);
  // Where a user looks: stats, its text and /metrics show the limit reached and the jobs it holds back.
  // (Held back counts only while the leases run: read first, before the slower command line.)
  const pdfStats = (await queue.stats()).byKind.find((entry) => entry.kind === 'pdf');
  assert.deepEqual(pdfStats?.limit, { concurrency: 3, groupConcurrency: null, rate: null, groupRate: null, running: 3, heldBack: 17 });
  const metrics = await new QueueMetrics(queue).render();
  assert.match(metrics, /^jobq_limit_concurrency\{kind="pdf"\} 3$/m);
  assert.match(metrics, /^jobq_limit_held_back\{kind="pdf"\} 17$/m);
  const text = (await runCli(['stats', '--database-url', db.url])).stdout;
  assert.match(text, /^\| kind +\| waiting \| scheduled \| running \|  failed \|    done \| cancelled \|  paused \|   limit \|$/m);
  assert.match(text, /^\| pdf +\|      17 \|         0 \|       3 \|       0 \|       0 \|         0 \|         \|       3 \|$/m);

  const other = work(['--once']);
  assert.equal((await other.done).code, 0);
  const runs = await runsOf('pdf');
  const after = runs.filter((run) => run.pid !== hung.pid);
  assert.equal(new Set(after.map((run) => run.job_id)).size, 20, "the other worker ran every job, the killed worker's 3 again");
  // The killed worker's runs count until their leases end: with them, never more than 3 at once.
  const killed = runs.filter((run) => run.pid === hung.pid).map((run) => ({ ...run, ended: leases.find((lease) => Number(lease.id) === Number(run.job_id))!.leaseEnd }));
  assert.equal(mostAtOnce([...killed, ...after]), 3, `no run took a slot before a lease ended: ${JSON.stringify(leases)}, first runs ${after.slice(0, 3).map((run) => run.started)}`);
});

test('a rate of 20 per second, 200 jobs, 2 worker processes: never more than 20 claimed in any one second, the rate reached, all claimed within 12 s of the first claim', async () => {
  const { queue, db } = context;
  await noRuns();
  const set = await runCli(['limit', 'set', '--kind', 'charge', '--rate', '20/1s', '--database-url', db.url]);
  assert.equal(set.stdout, 'kind "charge": at most 20 claimed per second\n', set.stderr);
  await queue.enqueueMany(Array.from({ length: 200 }, (_, n) => ({ kind: 'charge', payload: { n } })));
  const workers = Array.from({ length: 2 }, () => work(['--once'], { RUN_MS: '10' }));
  for (const { done } of workers) assert.equal((await done).code, 0);
  // From the first claim to the last, by the server's clock: the processes' start-up is not the
  // rate's, nor are the handlers' ends (on a machine running both servers' suites, the last ended
  // 12.2 s after the first claim once).
  const [{ seconds }] = await db.rows<{ seconds: number }>("SELECT TIMESTAMPDIFF(MICROSECOND, MIN(claimed), MAX(claimed)) / 1e6 AS seconds FROM runs WHERE kind = 'charge'");

  const runs = await runsOf('charge');
  assert.equal(new Set(runs.map((run) => Number(run.job_id))).size, 200, 'every job ran');
  assert.equal(runs.length, 200, 'none ran twice');
  // Claims by the server's clock: what the rate holds. (Handlers start a few milliseconds after
  // their claims, and the window reaches 10 ms further back for that, but on a machine running
  // the other test files beside this one a process can be held up for longer than that.)
  const most = await mostClaimedWithin(db, 1, 'charge');
  assert.ok(most <= 20, `${most} claimed within one second`);
  assert.ok(most >= 15, `the rate was reached: at most ${most} claimed within a second`);
  assert.ok(Number(seconds) <= 12, `the last claimed ${Number(seconds).toFixed(1)} s after the first`);
  assert.deepEqual((await queue.limits()).find((limit) => limit.kind === 'charge'), { kind: 'charge', concurrency: null, groupConcurrency: null, rate: { jobs: 20, perSeconds: 1 }, groupRate: null, running: 0 });
  await queue.removeLimit('charge');
});

test('a limit changed while workers run takes hold within a second; removed, it is lifted', async () => {
  const { queue, db } = context;
  await noRuns();
  await queue.setLimit('pdf', { concurrency: 2 });
  await queue.enqueueMany(Array.from({ length: 2000 }, () => ({ kind: 'pdf' })));
  const worker = work([], { RUN_MS: '100' });
  try {
    await waitUntil(async () => (await runsOf('pdf')).length >= 20, 'runs under the first limit');
    const [{ changedAt }] = await db.rows<{ changedAt: string }>('SELECT NOW(6) AS changedAt');
    await queue.setLimit('pdf', { concurrency: 6 });
    await waitUntil(async () => mostAtOnce((await runsOf('pdf')).filter((run) => run.started >= changedAt)) === 6, 'six at once under the new limit', { timeoutMs: 10_000 });
    const before = (await runsOf('pdf')).filter((run) => run.started < changedAt);
    assert.equal(mostAtOnce(before), 2, 'two at once before the change');
    const firstOfSix = await db.rows<{ late: number }>(
      'SELECT TIMESTAMPDIFF(MICROSECOND, ?, MIN(started)) / 1e6 AS late FROM runs r WHERE started >= ? AND (SELECT COUNT(*) FROM runs o WHERE o.started <= r.started AND (o.ended IS NULL OR o.ended > r.started)) >= 3',
      [changedAt, changedAt],
    );
    assert.ok(Number(firstOfSix[0]!.late) < 1, `more than two ran at once ${firstOfSix[0]!.late} s after the change`);
    assert.equal(await queue.removeLimit('pdf'), true);
    const [{ removedAt }] = await db.rows<{ removedAt: string }>('SELECT NOW(6) AS removedAt');
    await waitUntil(async () => mostAtOnce((await runsOf('pdf')).filter((run) => run.started >= removedAt)) > 6, 'more than six at once without a limit', { timeoutMs: 10_000 });
  } finally {
    worker.kill('SIGTERM');
    await worker.done;
  }
});

test('a claim is held back by a limit only where the limit left jobs waiting: a capped kind with nothing queued does not make workers back off', async () => {
  const { queue, db } = context;
  const direct = await Database.open({ settings: parseDatabaseUrl(db.url) });
  const turn = async () => {
    const result = await claimTurn(direct, quoteIdentifier('jobs'), {
      claim: { batchSize: 20, ownerId: 1 },
      rules: { ...noKindRules('jobs'), refresh: true },
      totals: { queue: 'jobs', pending: new TotalsTally(), flush: true },
    });
    await db.admin.query('DELETE FROM jobs WHERE claim_token = ?', [result.claim.token]);
    return { jobs: result.claim.jobs.length, heldBack: result.heldBack };
  };
  try {
    await db.admin.query('DELETE FROM jobs');
    await queue.setLimit('capped', { concurrency: 3 });
    await queue.enqueueMany(Array.from({ length: 5 }, () => ({ kind: 'plain' })));
    assert.deepEqual(await turn(), { jobs: 5, heldBack: undefined }, 'nothing of the capped kind waits: not held back');
    await queue.enqueueMany(Array.from({ length: 2 }, () => ({ kind: 'capped' })));
    assert.deepEqual(await turn(), { jobs: 2, heldBack: undefined }, 'fewer capped jobs than its slots: not held back');
    await queue.enqueueMany(Array.from({ length: 5 }, () => ({ kind: 'capped' })));
    assert.deepEqual(await turn(), { jobs: 3, heldBack: 'full' }, 'more than its slots: the claim filled it');
  } finally {
    await direct.close();
    await queue.removeLimit('capped');
    await db.admin.query("DELETE FROM jobs WHERE kind IN ('plain', 'capped')");
  }
});

test('bad limits: one line, exit code 2, nothing changed', async () => {
  const { queue, db } = context;
  await queue.setLimit('report', { concurrency: 4 });
  const before = await queue.limits();
  const cases: Array<[string[], RegExp]> = [
    [['--kind', 'report', '--concurrency', '0'], /^error: option '--concurrency <n>' argument '0' is invalid\. expected a whole number from 1 to 1000000, got "0"\./],
    [['--kind', 'report', '--concurrency', '-3'], /argument '-3' is invalid/],
    [['--kind', 'report', '--concurrency', 'ten'], /argument 'ten' is invalid/],
    [['--kind', 'report', '--concurrency', '2.5'], /argument '2\.5' is invalid/],
    [['--kind', 'k'.repeat(65), '--concurrency', '2'], /^jobq: kind must be a string of 1-64 characters/],
    [['--kind', 'report'], /^jobq: give a limit: --concurrency, --group-concurrency, --rate or --group-rate$/m],
    [['--kind', 'report', '--rate', '20'], /^error: option '--rate <n\/duration>' argument '20' is invalid\. expected a number of jobs per length of time like 100\/1s/],
    [['--kind', 'report', '--rate', '0/1s'], /argument '0\/1s' is invalid/],
    [['--kind', 'report', '--rate', '5/0.5s'], /argument '5\/0\.5s' is invalid/],
    [['--kind', 'report', '--group-rate', '5/fortnight'], /^error: option '--group-rate <n\/duration>' argument '5\/fortnight' is invalid/],
    [['--kind', 'report', '--group-concurrency', '0'], /^error: option '--group-concurrency <n>' argument '0' is invalid/],
  ];
  for (const [args, stderr] of cases) {
    const result = await runCli(['limit', 'set', ...args, '--database-url', db.url]);
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, stderr);
    assert.ok(result.stderr.trimEnd().split('\n').length <= 2, result.stderr);
  }
  await assert.rejects(queue.setLimit('report', { concurrency: 0 }), /^JobqError: concurrency must be a whole number from 1 to 1000000, not 0$/);
  await assert.rejects(queue.setLimit('report', { concurency: 2 } as never), /unknown limit "concurency"; a limit may have concurrency, groupConcurrency, rate, groupRate/);
  await assert.rejects(queue.setLimit('report', { groupConcurrency: -1 }), /^JobqError: groupConcurrency must be a whole number from 1 to 1000000, not -1$/);
  await assert.rejects(queue.setLimit('report', {}), /^JobqError: a limit needs one of concurrency, groupConcurrency, rate, groupRate, e\.g\. \{ concurrency: 10 \}$/);
  await assert.rejects(queue.setLimit('report', { rate: { jobs: 10 } } as never), /^JobqError: rate must be \{ jobs, perSeconds \} with jobs a whole number from 1 to 1000000 and perSeconds from 1 to 86400, not \{"jobs":10\}$/);
  await assert.rejects(queue.setLimit('report', { groupRate: { jobs: 10, perSeconds: 0.5 } }), /^JobqError: groupRate must be/);
  assert.deepEqual(await queue.limits(), before);
});
