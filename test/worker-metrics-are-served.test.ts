import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { runCli, startCli } from './helpers/run-cli.js';

const EMAIL_HANDLERS = fileURLToPath(new URL('../../test/fixtures/email-handlers.mjs', import.meta.url));
const context = queueForTests();

/** The samples of a Prometheus text page, by name and labels; throws on a line that is not one. */
function samples(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-z_]+)(\{[^}]*\})? (-?[\d.e+]+|\+Inf)$/.exec(line);
    assert.ok(match, `a Prometheus sample line: ${line}`);
    found.set(`${match[1]}${match[2] ?? ''}`, Number(match[3]));
  }
  return found;
}

test('jobq work --metrics-port: the worker counts and times the jobs it handled', async () => {
  const { queue, db } = context;
  await queue.enqueueMany(Array.from({ length: 40 }, () => ({ kind: 'email' })));
  const worker = startCli(['work', '--handler', EMAIL_HANDLERS, '--metrics-port', '0', '--database-url', db.url]);
  try {
    const url = (await worker.waitFor(/^metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)$/m))[1]!;
    let found = new Map<string, number>();
    for (const started = Date.now(); (found.get('jobq_worker_jobs_completed_total') ?? 0) < 40 && Date.now() - started < 10_000; ) {
      found = samples(await (await fetch(url)).text());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(found.get('jobq_worker_jobs_completed_total'), 40);
    assert.equal(found.get('jobq_worker_handler_duration_seconds_count{kind="email",outcome="completed"}'), 40);
    assert.ok((found.get('jobq_worker_claims_total') ?? 0) >= 1);
    assert.equal((await fetch(url.replace('/metrics', '/other'))).status, 404);
  } finally {
    worker.kill('SIGINT');
    assert.equal((await worker.done).code, 0);
  }
});

test('jobq work --processes 2 --metrics-port: each process serves its own, and together they count every job', async () => {
  const { queue, db } = context;
  await queue.enqueueMany(Array.from({ length: 60 }, () => ({ kind: 'email' })));
  const run = startCli(['work', '--handler', EMAIL_HANDLERS, '--processes', '2', '--metrics-port', '0', '--database-url', db.url]);
  try {
    const first = (await run.waitFor(/^worker 1: metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)$/m))[1]!;
    const second = (await run.waitFor(/^worker 2: metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)$/m))[1]!;
    assert.notEqual(first, second);
    let completed = 0;
    for (const started = Date.now(); completed < 60 && Date.now() - started < 10_000; await new Promise((resolve) => setTimeout(resolve, 100))) {
      const pages = await Promise.all([first, second].map(async (url) => samples(await (await fetch(url)).text())));
      completed = pages.reduce((sum, page) => sum + (page.get('jobq_worker_jobs_completed_total') ?? 0), 0);
    }
    assert.equal(completed, 60);
  } finally {
    run.kill('SIGINT');
    assert.equal((await run.done).code, 0);
  }
});

test('--metrics-host on another address without a token: one line, exit code 2, nothing claimed', async () => {
  const { db } = context;
  const before = await db.rows('SELECT id, status FROM jobs ORDER BY id');
  const open = await runCli(['work', '--handler', EMAIL_HANDLERS, '--metrics-port', '0', '--metrics-host', '0.0.0.0', '--database-url', db.url], { JOBQ_DASHBOARD_TOKEN: '' });
  assert.equal(open.code, 2);
  assert.match(open.stderr, /^jobq: other machines can reach 0\.0\.0\.0: listening there needs JOBQ_DASHBOARD_TOKEN,/);
  assert.deepEqual(await db.rows('SELECT id, status FROM jobs ORDER BY id'), before);
});
