import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueueMetrics } from '../src/dashboard/metrics.js';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { mostAtOnce, mostClaimedWithin, timedRuns, type Run } from './helpers/timed-runs.js';
import { waitUntil } from './helpers/wait.js';

// A limit on the kind "*" holds for every kind together, across worker processes: the handlers'
// own start and end times, of whatever kind, never show more running than the limit.

const context = queueForTests();
const { noRuns, work } = timedRuns(context);
const allRuns = () => context.db.rows<Run>('SELECT job_id, kind, job_group, pid, claimed, started, ended FROM runs ORDER BY run');

test('"*" limited to 4, 3 worker processes at concurrency 2, 120 jobs of two kinds: never more than 4 at once of all of them, the limit reached, every job once', async () => {
  const { queue, db } = context;
  await noRuns();
  const set = await runCli(['limit', 'set', '--kind', '*', '--concurrency', '4', '--database-url', db.url]);
  assert.equal(set.stdout, 'every kind: at most 4 running at once\n', set.stderr);
  await queue.enqueueMany(Array.from({ length: 120 }, (_, n) => ({ kind: ['pdf', 'email'][n % 2]!, payload: { n } })));

  // At concurrency 2, no worker can hold every slot: the limit is reached only across processes.
  // A run ends only once its kind runs in two processes, so that on a loaded machine a worker that
  // starts first cannot run the jobs two at a time before the others are up.
  const workers = Array.from({ length: 3 }, () => work(['--once', '--concurrency', '2'], { UNTIL_PROCESSES: '2' }));
  for (const { done } of workers) assert.equal((await done).code, 0);

  const runs = await allRuns();
  assert.equal(new Set(runs.map((run) => Number(run.job_id))).size, 120, 'every job ran');
  assert.equal(runs.length, 120, 'none ran twice');
  assert.equal(mostAtOnce(runs), 4, 'the limit held across kinds and was reached');
  assert.deepEqual(await queue.limits(), [{ kind: '*', concurrency: 4, groupConcurrency: null, rate: null, groupRate: null, running: 0 }]);
  const list = await runCli(['limit', 'list', '--database-url', db.url]);
  assert.match(list.stdout, /^\* \(every kind\) +4 +- +- +- +0$/m);
  assert.equal((await runCli(['limit', 'remove', '--kind', '*', '--database-url', db.url])).stdout, 'every kind: no limit now\n');
});

test('"*" at 10 per second with a kind limited to 1 at once: never more than 10 claimed in any one second, whatever the kind, and never 2 of that kind at once', async () => {
  const { queue, db } = context;
  await noRuns();
  await queue.setLimit('*', { rate: { jobs: 10, perSeconds: 1 } });
  await queue.setLimit('pdf', { concurrency: 1 });
  await queue.enqueueMany(Array.from({ length: 40 }, (_, n) => ({ kind: ['pdf', 'email'][n % 2]!, payload: { n } })));
  const workers = Array.from({ length: 2 }, () => work(['--once'], { RUN_MS: '10' }));
  for (const { done } of workers) assert.equal((await done).code, 0);

  const runs = await allRuns();
  assert.equal(runs.length, 40, 'every job ran once');
  const most = await mostClaimedWithin(db, 1, undefined);
  assert.ok(most <= 10, `${most} claimed within one second`);
  assert.ok(most >= 7, `the rate was reached: at most ${most} claimed within a second`);
  assert.equal(mostAtOnce(runs.filter((run) => run.kind === 'pdf')), 1, "the kind's own limit held too");
  await queue.removeLimit('*');
  await queue.removeLimit('pdf');
});

test('"*" is no kind for jobs, and takes no limit per group: one line, exit code 2, nothing changed', async () => {
  const { queue, db } = context;
  const enqueue = await runCli(['enqueue', '--kind', '*', '--database-url', db.url]);
  assert.equal(enqueue.code, 2);
  assert.equal(enqueue.stderr, 'jobq: --kind: "*" is not a kind: it stands for every kind in limits; give a kind\'s name\n');
  const perGroup = await runCli(['limit', 'set', '--kind', '*', '--group-concurrency', '1', '--database-url', db.url]);
  assert.equal(perGroup.code, 2);
  assert.equal(perGroup.stderr, 'jobq: a limit on every kind ("*") takes concurrency and rate; set limits per group on a kind\n');
  await assert.rejects(queue.enqueue({ kind: '*' }), /"\*" is not a kind/);
  assert.deepEqual(await queue.limits(), []);
  assert.equal((await queue.stats()).total, 0);
});

test('"*" at its limit: stats, its text and /metrics show it with the jobs it holds back', async () => {
  const { queue, db } = context;
  await noRuns();
  await queue.setLimit('*', { concurrency: 2 });
  await queue.enqueueMany(Array.from({ length: 5 }, (_, n) => ({ kind: ['pdf', 'email'][n % 2]!, payload: { n } })));
  const hung = work([], { RUN_MS: '600000' });
  try {
    await waitUntil(async () => (await allRuns()).length === 2, 'two jobs run');
    const stats = await queue.stats();
    assert.deepEqual(stats.everyKindLimit, { concurrency: 2, groupConcurrency: null, rate: null, groupRate: null, running: 2, heldBack: 3 });
    assert.equal(stats.byKind.some((entry) => entry.kind === '*'), false, '"*" is not listed as a kind');
    const metrics = await new QueueMetrics(queue).render();
    assert.match(metrics, /^jobq_limit_concurrency\{kind="\*"\} 2$/m);
    assert.match(metrics, /^jobq_limit_held_back\{kind="\*"\} 3$/m);
    const text = (await runCli(['stats', '--database-url', db.url])).stdout;
    assert.match(text, /^limit on every kind: 2 \(2 running, 3 held back\)$/m);
  } finally {
    hung.kill('SIGKILL');
    await hung.done;
  }
});
