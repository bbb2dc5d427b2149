import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';
import { entriesReadBy } from './helpers/session-counters.js';
import { claimTurn } from '../src/claim/turn.js';
import { TotalsTally } from '../src/claim/running-totals.js';
import { parseDatabaseUrl } from '../src/config/database-url.js';
import { quoteIdentifier } from '../src/config/identifiers.js';
import { Database } from '../src/db/database.js';

const context = queueForTests();

/** Claims (of `kinds`, if given) until one gets a job; returns that claim and when it came, in ms after `since`. */
async function firstClaimWithJobs(since: number, kinds?: string[]) {
  let claim = await context.queue.claim({ batchSize: 10, kinds });
  await waitUntil(async () => (claim = await context.queue.claim({ batchSize: 10, kinds })).jobs.length > 0, 'the delayed job is handed out', { everyMs: 20 });
  return { claim, afterMs: performance.now() - since };
}

/** Enqueues one job with `jobq enqueue` (a process that exits at once) and returns its id. */
async function enqueuedByCli(args: string[]): Promise<number> {
  const queued = await runCli(['enqueue', ...args, '--database-url', context.db.url]);
  assert.equal(queued.code, 0, queued.stderr);
  return Number(/^queued 1 job \(id (\d+)\)$/.exec(queued.stdout.trim())?.[1]);
}

test('a delayed job is not handed out before its time, then it is', async () => {
  const startedAt = performance.now();
  const id = await enqueuedByCli(['--kind', 'later', '--payload', '{"x": 1}', '--delay', '2']);

  assert.equal((await context.queue.claim({ batchSize: 10 })).jobs.length, 0, 'not claimable by oldest-first');
  assert.equal((await context.queue.claim({ batchSize: 10, kinds: ['later'] })).jobs.length, 0, 'not claimable by kind');
  const { counts } = await context.queue.stats();
  assert.deepEqual([counts.unclaimed, counts.scheduled], [0, 1]);

  const { claim, afterMs } = await firstClaimWithJobs(startedAt, ['later']);
  assert.ok(afterMs >= 2000, `handed out ${Math.round(afterMs)} ms after the enqueue began, not after 2 s`);
  assert.deepEqual(claim.jobs.map((job) => [job.id, job.kind, job.payload]), [[id, 'later', { x: 1 }]]);
  await context.queue.complete(claim);
});

test('runAfter in the API delays by the time left', async () => {
  const startedAt = performance.now();
  await context.queue.enqueue({ payload: 'soon', runAfter: new Date(Date.now() + 1000) });
  assert.equal((await context.queue.claim({ batchSize: 10 })).jobs.length, 0);
  const { claim, afterMs } = await firstClaimWithJobs(startedAt);
  // The delay is sent as the time left (not as a time on the server's clock), rounded to the millisecond.
  assert.ok(afterMs >= 995, `handed out ${Math.round(afterMs)} ms after runAfter was set 1 s ahead`);
  assert.deepEqual(claim.jobs.map((job) => job.payload), ['soon']);
  await context.queue.complete(claim);
});

test('claims read past no job due later: scheduled jobs are read only once due, and a turn makes them waiting for the next', async () => {
  const { queue, db } = context;
  // 4,000 jobs due in an hour, at four priorities, half of them of a kind; 3 due now.
  await queue.enqueueMany(Array.from({ length: 4000 }, (_, n) => ({ ...(n % 2 === 0 && { kind: 'later' }), priority: n % 4, delaySeconds: 3600 })));
  const due = [await queue.enqueue({ kind: 'later' }), await queue.enqueue({ priority: 3 }), await queue.enqueue({})];
  const statuses = async () => Object.fromEntries((await db.rows<{ status: string; n: number }>('SELECT status, COUNT(*) AS n FROM jobs GROUP BY status')).map((row) => [row.status, Number(row.n)]));
  assert.deepEqual(await statuses(), { scheduled: 4000, unclaimed: 3 });
  const stats = await queue.stats();
  assert.deepEqual([stats.counts.unclaimed, stats.counts.scheduled], [3, 4000]);

  const claimer = await Database.open({ settings: parseDatabaseUrl(db.url) });
  try {
    /** A claim turn, and the index entries and rows it read. */
    const turn = (kinds?: string[]) =>
      entriesReadBy(claimer, () =>
        claimTurn(claimer, quoteIdentifier('jobs'), {
          claim: { batchSize: 10, leaseSeconds: 60, ownerId: 1, ...(kinds !== undefined && { kinds }) },
          totals: { queue: 'jobs', pending: new TotalsTally(), flush: true },
        }),
      );
    const whole = await turn();
    assert.deepEqual(whole.result.claim.jobs.map((job) => job.id).sort(), [...due].sort());
    assert.ok(whole.read < 100, `a claim of the whole queue read ${whole.read} entries beside 4,000 jobs due later`);
    for (const kinds of [undefined, ['later']]) {
      const idle = await turn(kinds);
      assert.equal(idle.result.claim.jobs.length, 0);
      assert.ok(idle.read < 100, `an empty claim (${kinds ?? 'whole queue'}) read ${idle.read} entries beside 4,000 jobs due later`);
    }

    // Five come due: the next turn makes them waiting, the one after claims them.
    const comeDue = (await db.rows<{ id: number }>("SELECT id FROM jobs WHERE status = 'scheduled' ORDER BY id DESC LIMIT 5")).map((row) => Number(row.id));
    await db.admin.query('UPDATE jobs SET run_after = NOW(6) - INTERVAL 1 SECOND WHERE id IN (?)', [comeDue]);
    assert.equal(await queue.hasPendingWork(), true, 'scheduled jobs come due are work to do');
    const promoting = await turn();
    assert.equal(promoting.result.promoted, 5);
    assert.deepEqual(await statuses(), { scheduled: 3995, unclaimed: 5, claimed: 3 });
    const claiming = await turn();
    assert.deepEqual(claiming.result.claim.jobs.map((job) => job.id).sort(), [...comeDue].sort());
    assert.ok(claiming.read < 100, `read ${claiming.read} entries`);
  } finally {
    await claimer.close();
  }
  await db.admin.query('DELETE FROM jobs');
  await queue.recount();
});

test('a job that comes due while a worker works through a backlog starts long before the backlog is done', async () => {
  const { queue, db } = context;
  // A turn that filled its batch reads the due jobs at most every 250 ms: a job more urgent than
  // the backlog is claimed in the next turn the worker has room for, and starts before the jobs it
  // holds. With one 2 ms handler at a time (500 jobs a second at most), 200-230 backlog jobs
  // started between its due time and its own start (at most 125 in 250 ms, 100 while the worker
  // made room for a batch); a loop that never looked on a backlog would run all that are left. It
  // is enqueued by a process that exits at once, whose timer cannot wake the worker then, and the
  // count runs from its due time: how long the CLI takes to start is the machine's.
  const BACKLOG = 5000;
  const MOST_AFTER_DUE = 400;
  await queue.enqueueMany(Array.from({ length: BACKLOG }, () => ({ kind: 'backlog' })));
  let started = 0;
  let startedAtDue: number | undefined;
  let startedBeforeDue: number | undefined;
  const worker = queue.work(
    {
      backlog: async () => {
        started++;
        await new Promise((resolve) => setTimeout(resolve, 2));
      },
      // A timer that fires late (the handlers keep the event loop busy) would count jobs started
      // after the due one: its own start, which comes after its due time, caps the count.
      due: async () => {
        startedAtDue ??= started;
        startedBeforeDue = started;
      },
    },
    { concurrency: 1 },
  );
  try {
    await waitUntil(() => started > 0, 'the backlog is being worked through');
    const id = await enqueuedByCli(['--kind', 'due', '--priority', '-1', '--delay', '1']);
    const [{ dueInUs }] = await db.rows<{ dueInUs: number }>('SELECT TIMESTAMPDIFF(MICROSECOND, NOW(6), run_after) AS dueInUs FROM jobs WHERE id = ?', [id]);
    setTimeout(() => (startedAtDue ??= started), Math.max(0, Number(dueInUs) / 1000));
    await waitUntil(() => startedBeforeDue !== undefined, 'the due job started', { timeoutMs: 60_000 });
    assert.ok(startedAtDue !== undefined && BACKLOG - startedAtDue > 2 * MOST_AFTER_DUE, `the backlog was nearly done (${startedAtDue} of ${BACKLOG}) when the job came due: the test proves nothing`);
    const after = startedBeforeDue! - startedAtDue;
    assert.ok(after <= MOST_AFTER_DUE, `the due job started after ${after} more backlog jobs (${startedAtDue} started when it came due, ${startedBeforeDue} when it started)`);
  } finally {
    await worker.stop();
  }
});
