import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli, startCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

const RECORD_IDS = fileURLToPath(new URL('../../test/fixtures/record-ids-handler.mjs', import.meta.url));
const context = queueForTests();

const tickOf = (row: { job_key: string }) => Number(row.job_key.split(':')[2]);

test('a schedule firing every second, 3 worker processes for 8 ticks: one job per tick, never two', async () => {
  const { queue, db } = context;
  await db.admin.query(`CREATE TABLE \`${db.name}\`.seen (id BIGINT NOT NULL)`);
  // catchUp "all": a ticker that a loaded machine holds up past a tick still enqueues it, so every
  // tick has a job and only the "never two" rule is under test.
  await queue.schedule('every-second', '* * * * * *', { kind: 'tick', payload: { from: 'schedule' } }, { catchUp: 'all' });
  // Three processes that share nothing but the database, each with its own ticker.
  const workers = [1, 2, 3].map(() => startCli(['work', '--handler', RECORD_IDS, '--keep-done', '--database-url', db.url], { JOBQ_DATABASE_URL: db.url }));
  const handled = async () => Number((await db.rows<{ n: number }>('SELECT COUNT(*) AS n FROM seen'))[0]!.n);
  await waitUntil(async () => (await handled()) >= 8, '8 ticks are handled', { timeoutMs: 60_000 });
  for (const worker of workers) worker.kill('SIGTERM');
  for (const worker of workers) assert.equal((await worker.done).code, 0);

  const rows = await db.rows<{ id: number; job_key: string; status: string; payload: string }>("SELECT id, job_key, status, CAST(payload AS CHAR) AS payload FROM jobs WHERE kind = 'tick'");
  const ticks = rows.map(tickOf);
  assert.equal(new Set(ticks).size, ticks.length, 'never two jobs for one tick');
  assert.ok(ticks.every((tick) => tick % 1000 === 0), 'ticks fall on whole seconds');
  const sorted = [...ticks].sort((a, b) => a - b);
  assert.deepEqual(sorted.slice(1).map((tick, i) => tick - sorted[i]!), Array(sorted.length - 1).fill(1000), 'no tick was skipped');
  assert.ok(rows.every((row) => JSON.parse(row.payload).from === 'schedule'), 'each job carries the schedule payload');
  // A ticker may enqueue a last tick while the workers stop: it waits, unclaimed, for the next worker.
  assert.deepEqual(rows.filter((row) => row.status !== 'done').map((row) => row.status).filter((status) => status !== 'unclaimed'), [], 'no tick job left claimed');
  const seen = (await db.rows<{ id: number }>('SELECT id FROM seen ORDER BY id')).map((row) => Number(row.id));
  const done = rows.filter((row) => row.status === 'done').map((row) => Number(row.id)).sort((a, b) => a - b);
  assert.deepEqual(seen, done, 'every tick job done was handled once');
  assert.ok(done.length >= 8);
  assert.equal(await queue.unschedule('every-second'), true);
});

test('after downtime only the latest missed tick is enqueued; with catchUp "all", every one', async () => {
  const { queue, db } = context;
  await db.admin.query(`DELETE FROM \`${db.name}\`.jobs`);
  const scheduledAt = Date.now();
  await queue.schedule('latest', '* * * * * *', { kind: 'missed-latest' });
  await queue.schedule('all', '* * * * * *', { kind: 'missed-all' }, { catchUp: 'all' });
  // No worker runs for 3 s: ticks are missed.
  await sleep(3200);
  const workStartedAt = Date.now();
  const worker = queue.work({ 'missed-latest': async () => undefined, 'missed-all': async () => undefined }, { keepDone: true });
  const ticks = async (kind: string) => (await db.rows<{ job_key: string }>('SELECT job_key FROM jobs WHERE kind = ?', [kind])).map(tickOf).sort((a, b) => a - b);
  const lastMissed = Math.floor(workStartedAt / 1000) * 1000;
  await waitUntil(async () => (await ticks('missed-latest')).length > 0 && ((await ticks('missed-all')).at(-1) ?? 0) >= lastMissed, 'the worker has caught up');
  await worker.stop();
  const latest = await ticks('missed-latest');
  // However late the worker's first look came, it enqueued no tick before the latest it missed.
  assert.ok(latest[0]! >= lastMissed, `one job for the missed ticks, the latest: ${latest.map((t) => new Date(t).toISOString())} from ${new Date(lastMissed).toISOString()}`);
  const all = await ticks('missed-all');
  assert.ok(all[0]! <= Math.ceil(scheduledAt / 1000) * 1000 + 1000, 'catchUp "all" starts at the first tick after the schedule was stored');
  assert.deepEqual(all.slice(1).map((tick, i) => tick - all[i]!), Array(all.length - 1).fill(1000), 'a job for each missed tick');
  assert.ok(all.filter((tick) => tick <= lastMissed).length >= 3, 'three ticks or more were missed');
  const listed = await queue.schedules();
  assert.deepEqual(listed.map((s) => [s.name, s.catchUp]), [['all', 'all'], ['latest', 'latest']]);
  assert.ok(listed.every((s) => s.lastTick !== null && s.nextTick !== null && s.nextTick > s.lastTick));
});

test('the jobs a schedule enqueues count under their kind in stats(), before any worker has run one', async () => {
  const { queue, db } = context;
  await db.admin.query(`DELETE FROM \`${db.name}\`.jobs`);
  await queue.schedule('ticked-only', '* * * * * *', { kind: 'ticked-only' });
  // A worker of another kind runs the ticker; nobody runs the scheduled kind's jobs.
  const worker = queue.work({ 'something-else': async () => undefined });
  await waitUntil(async () => (await db.rows("SELECT id FROM jobs WHERE kind = 'ticked-only'")).length > 0, 'a tick enqueued');
  await worker.stop();
  await queue.unschedule('ticked-only');
  const [{ n }] = (await db.rows<{ n: number }>("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'ticked-only' AND status = 'unclaimed'")) as [{ n: number }];
  const stats = await queue.stats();
  assert.equal(stats.byKind.find((entry) => entry.kind === 'ticked-only')?.counts.unclaimed, Number(n));
  assert.equal(stats.byKind.find((entry) => entry.kind === null), undefined, 'no job counted as of no kind');
});

test('jobq schedule add/list/remove, and bad input: one line, exit code 2, nothing stored', async () => {
  const { db } = context;
  const add = await runCli(['schedule', 'add', 'nightly', '--cron', '0 2 * * *', '--kind', 'report', '--time-zone', 'Europe/Berlin', '--database-url', db.url]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stdout, /^schedule "nightly": 0 2 \* \* \* \(Europe\/Berlin\), kind report; next tick \d{4}-\d\d-\d\dT0[01]:00:00\.000Z\n$/);
  const list = await runCli(['schedule', 'list', '--database-url', db.url]);
  assert.match(list.stdout, /^nightly +0 2 \* \* \* +Europe\/Berlin +report +\S+ +never$/m);
  const stats = JSON.parse((await runCli(['stats', '--json', '--database-url', db.url])).stdout);
  const report = stats.byKind.find((entry: { kind: string }) => entry.kind === 'report');
  assert.match(report.nextScheduledAt, /T0[01]:00:00\.000Z$/, 'stats shows the kind\'s next schedule');

  const before = await db.rows('SELECT name FROM jobq_schedules ORDER BY name');
  for (const [args, message] of [
    [['--cron', '* * *', '--kind', 'k'], /^jobq: cron "\* \* \*" in time zone UTC cannot be used: invalid configuration format/],
    [['--cron', '* * * * *', '--kind', 'k', '--time-zone', 'Mars/Base'], /^jobq: cron "\* \* \* \* \*" in time zone Mars\/Base cannot be used/],
    [['--cron', '* * * * *', '--kind', 'k', '--payload', '{x}'], /^jobq: --payload is not JSON/],
    [['--cron', '* * * * *', '--kind', 'k', '--catch-up', 'some'], /^error: option '--catch-up <which>' argument 'some' is invalid/],
    [['--cron', '* * * * *'], /^error: required option '--kind <kind>' not specified/],
  ] as const) {
    const result = await runCli(['schedule', 'add', 'broken', ...args, '--database-url', db.url]);
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message);
  }
  assert.deepEqual(await db.rows('SELECT name FROM jobq_schedules ORDER BY name'), before, 'nothing stored by a refused add');

  const removed = await runCli(['schedule', 'remove', 'nightly', '--database-url', db.url]);
  assert.equal(removed.stdout, 'removed schedule "nightly"\n');
  const again = await runCli(['schedule', 'remove', 'nightly', '--database-url', db.url]);
  assert.equal(again.code, 2);
  assert.equal(again.stderr, 'jobq: no schedule "nightly"; "jobq schedule list" shows them\n');
});

test('a schedule whose ticks end fires once and ends; one whose cron cannot be read is skipped; the workers keep running', async () => {
  const { queue, db } = context;
  await db.admin.query(`DELETE FROM \`${db.name}\`.jobs`);
  await db.admin.query(`DELETE FROM \`${db.name}\`.jobq_schedules`);
  // A one-shot: seconds, minutes, hours, day, month, any weekday, and a year, 3 s from now (UTC).
  const at = new Date(Date.now() + 3000);
  const oneShot = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} * ${at.getUTCFullYear()}`;
  await queue.schedule('once', oneShot, { kind: 'once' });
  await queue.schedule('every-second', '* * * * * *', { kind: 'beat' });
  // A row no jobq would write (an older one, or a hand): the workers must skip it, not die of it.
  await db.admin.query("INSERT INTO jobq_schedules (queue, name, cron, time_zone, kind) VALUES ('jobs', 'by-hand', 'every day at noon', 'UTC', 'noon')");
  const workers = [1, 2].map(() => startCli(['work', '--handler', RECORD_IDS, '--keep-done', '--database-url', db.url], { JOBQ_DATABASE_URL: db.url }));
  for (const worker of workers) await worker.waitFor(/worker 1: warning: schedule "by-hand" is skipped: cron "every day at noon" in time zone UTC cannot be used/);
  const count = async (kind: string) => Number((await db.rows<{ n: number }>('SELECT COUNT(*) AS n FROM jobs WHERE kind = ?', [kind]))[0]!.n);
  await waitUntil(async () => (await count('once')) === 1, 'the one-shot tick is enqueued');
  const beatsThen = await count('beat');
  await waitUntil(async () => (await count('beat')) >= beatsThen + 2, 'the every-second schedule goes on ticking after the one-shot ended');
  for (const worker of workers) worker.kill('SIGTERM');
  for (const worker of workers) {
    const { code, stderr } = await worker.done;
    assert.equal(code, 0, stderr);
    assert.equal(stderr.match(/warning: schedule "by-hand"/g)?.length, 1, 'the skipped schedule is reported once per worker');
  }
  assert.equal(await count('once'), 1, 'the one-shot tick made one job');
  assert.equal(await count('noon'), 0, 'the unreadable schedule made none');

  const list = await runCli(['schedule', 'list', '--database-url', db.url]);
  assert.match(list.stdout, /^once +\S+ \S+ \S+ \S+ \S+ \* \d{4} +UTC +once +ended +\d{4}-/m);
  assert.match(list.stdout, /^schedule "by-hand" is skipped by the workers: cron "every day at noon" in time zone UTC cannot be used/m);
  const stats = JSON.parse((await runCli(['stats', '--json', '--database-url', db.url])).stdout);
  assert.deepEqual(stats.skippedSchedules.map((s: { name: string }) => s.name), ['by-hand']);
  assert.equal(stats.byKind.find((entry: { kind: string }) => entry.kind === 'once')?.nextScheduledAt ?? null, null, 'an ended schedule has no next tick');
});

test('jobq schedule add refuses a cron that never fires or first fires past 2038: one line, exit 2, nothing stored', async () => {
  const { db } = context;
  const before = await db.rows('SELECT name FROM jobq_schedules ORDER BY name');
  for (const [cron, message] of [
    ['0 0 30 2 *', /^jobq: cron "0 0 30 2 \*" in time zone UTC cannot be used: it never fires after now\n$/],
    ['0 0 0 1 1 * 2040', /^jobq: cron "0 0 0 1 1 \* 2040" in time zone UTC cannot be used: it first fires at 2040-01-01T00:00:00.000Z, past 2038-01-19T03:14:07.000Z, the last time the server's TIMESTAMP holds\n$/],
    ['0 0 0 1 1 * 2001', /^jobq: cron "0 0 0 1 1 \* 2001" in time zone UTC cannot be used: it never fires after now\n$/],
  ] as const) {
    const result = await runCli(['schedule', 'add', 'never', '--cron', cron, '--kind', 'k', '--database-url', db.url]);
    assert.equal(result.code, 2, `${cron}: ${result.stderr}`);
    assert.match(result.stderr, message);
  }
  assert.deepEqual(await db.rows('SELECT name FROM jobq_schedules ORDER BY name'), before, 'nothing stored by a refused add');
});
