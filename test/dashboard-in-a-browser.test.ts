import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { JobQueue, type Job } from '../src/index.js';
import { startCli, type CliRun } from './helpers/run-cli.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

// Debian's chromium, installed by .ci/run; no browser download works on these machines.
const CHROMIUM = process.env.JOBQ_TEST_CHROMIUM ?? '/usr/bin/chromium';
const OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`;

let db: TestDatabase;
let queue: JobQueue;
let dashboard: CliRun;
let browser: Browser;
let page: Page;
let base: string;
const token = randomBytes(24).toString('hex');
const dialogs: string[] = [];

before(async () => {
  if (skip) return;
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
  dashboard = startCli(['dashboard', '--port', '0', '--database-url', db.url], { JOBQ_DASHBOARD_TOKEN: token });
  base = (await dashboard.waitFor(/^jobq dashboard on (http:\/\/127\.0\.0\.1:\d+) /m))[1]!;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Without the background-networking flags Chromium keeps trying hosts this closed network refuses.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
});
after(async () => {
  if (skip) return;
  await browser.close();
  dashboard.kill('SIGINT');
  await dashboard.done;
  await queue.close();
  await db.drop();
});

/** Polls until `check` holds (the page redraws every 2 s), for at most 10 s. */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (const started = Date.now(); !(await check()); await new Promise((resolve) => setTimeout(resolve, 100))) {
    if (Date.now() - started > 10_000) throw new Error(`the page did not show it within 10 s`);
  }
}

const cellOf = (kind: string, column: number) => page.locator(`#kinds tr[data-kind="${kind}"] td`).nth(column);

test('log in, watch the counts change, requeue a failed job, see hostile payloads as text, and set and lift a limit', { skip }, async () => {
  await page.goto(`${base}/`);
  await page.fill('input[name="token"]', token);
  await page.click('button[type="submit"]');
  await page.waitForSelector('#statuses tbody tr');

  await queue.enqueueMany(Array.from({ length: 7 }, () => ({ kind: 'email', payload: { to: 'ann' } })));
  await until(async () => (await cellOf('email', 1).textContent({ timeout: 1000 }).catch(() => null)) === '7');
  assert.equal(await page.locator('#statuses tr[data-status="unclaimed"] td').nth(1).textContent(), '7');

  // A job whose kind, payload and error are all HTML, failed for good by a worker.
  const hostileKind = '<img src=x onerror=alert(1)>';
  const hostile = await queue.enqueue({ kind: hostileKind, payload: { html: '<script>alert(2)</script>' } });
  const failing = queue.work(
    {
      [hostileKind]: async () => {
        throw new Error('<img src=x onerror=alert(3)><script>alert(4)</script>');
      },
    },
    { maxAttempts: 1 },
  );
  while (failing.counters.failed === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  await failing.stop();
  const row = page.locator(`#failed tr[data-id="${hostile}"]`);
  await row.waitFor({ timeout: 10_000 });
  assert.equal(await row.locator('td').nth(3).textContent(), '<img src=x onerror=alert(3)><script>alert(4)</script>', 'the error is shown as text');
  assert.match((await row.locator('td').nth(4).textContent()) ?? '', /<script>alert\(2\)<\/script>/);
  assert.equal(await cellOf(hostileKind, 0).textContent(), hostileKind);
  assert.equal(await page.locator('main img, main script').count(), 0, 'no element was injected');

  // Some work going on for the screenshot: claims held, a throughput to draw.
  await queue.enqueueMany(Array.from({ length: 2000 }, (_, n) => ({ kind: n % 4 === 0 ? 'report' : 'email', payload: { n } })));
  const worker = queue.work({ email: () => new Promise((resolve) => setTimeout(resolve, 200)) }, { concurrency: 20, batchSize: 20 });
  const completedSamples = () =>
    page.evaluate(async () => ((await (await fetch('/api/throughput')).json()) as { points: Array<{ completedPerSecond: number }> }).points.filter((point) => point.completedPerSecond > 0).length);
  await until(async () => (await completedSamples()) >= 3 && Number(await page.locator('#statuses tr[data-status="claimed"] td').nth(1).textContent({ timeout: 1000 }).catch(() => '0')) > 0);
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: `${OUTPUT}dashboard.png`, fullPage: true });
  await worker.stop();

  await row.locator('button', { hasText: 'Requeue' }).click();
  await row.waitFor({ state: 'detached', timeout: 10_000 });
  assert.deepEqual(await db.rows('SELECT status, attempts FROM jobs WHERE id = ?', [hostile]), [{ status: 'unclaimed', attempts: 0 }], 'requeued with fresh attempts');

  // A limit set from the form shows in the kind's row; a bad one says why; lifted from the row.
  await page.fill('#limit-kind', 'email');
  await page.fill('#limit-concurrency', '3');
  await page.fill('#limit-rate', '100/1s');
  await page.click('#limit button[type="submit"]');
  await until(async () => (await cellOf('email', 9).textContent({ timeout: 1000 }).catch(() => null)) === '3, 100/1s');
  assert.deepEqual((await queue.limits()).map(({ kind, concurrency, rate }) => ({ kind, concurrency, rate })), [{ kind: 'email', concurrency: 3, rate: { jobs: 100, perSeconds: 1 } }]);
  await page.fill('#limit-rate', 'fast');
  await page.click('#limit button[type="submit"]');
  await until(async () => /^rate must be a number of jobs per length of time/.test((await page.locator('#limit-result').textContent()) ?? ''));
  // A redraw leaves a button whose row did not change in place: one replaced while pressed gets no click.
  const lift = page.locator('#kinds tr[data-kind="email"] button', { hasText: 'Lift limit' });
  const pressed = await lift.elementHandle();
  const drawnAt = await page.textContent('#updated');
  await until(async () => (await page.textContent('#updated')) !== drawnAt);
  assert.equal(await pressed?.evaluate((button) => button.isConnected), true, 'the redraw replaced the button');
  await lift.click();
  await until(async () => (await cellOf('email', 9).textContent({ timeout: 1000 }).catch(() => null)) === '');
  assert.deepEqual(await queue.limits(), []);
  // A limit on every kind: a row of its own, lifted from there.
  await page.fill('#limit-kind', '*');
  await page.fill('#limit-concurrency', '20');
  await page.fill('#limit-rate', '');
  await page.click('#limit button[type="submit"]');
  await until(async () => (await cellOf('*', 9).textContent({ timeout: 1000 }).catch(() => null)) === '20');
  assert.equal(await cellOf('*', 0).textContent(), '* (every kind)');
  await page.locator('#kinds tr[data-kind="*"] button', { hasText: 'Lift limit' }).click();
  await page.locator('#kinds tr[data-kind="*"]').waitFor({ state: 'detached', timeout: 10_000 });
  assert.deepEqual(await queue.limits(), []);
  assert.deepEqual(dialogs, [], 'no script ran: no dialog opened');
});

test("a job's page: open it from a search, see its errors and progress while it runs, cancel it; run a delayed one now; requeue a failed one opened from its list", { skip }, async () => {
  const field = (name: string) => page.locator(`#job-fields tr[data-field="${name}"] td`);
  const id = await queue.enqueue({ kind: 'import', group: 'acct-42', payload: { file: 'customers.csv' } });
  await queue.enqueueMany(Array.from({ length: 30 }, (_, n) => ({ kind: 'import', group: `acct-${n}`, delaySeconds: 3600 })));
  const worker = queue.work(
    {
      import: async (job: Job) => {
        if (job.attempts < 3) throw new Error(`the file server is busy (${job.attempts})`);
        job.progress({ rows: 40, of: 100 });
        await new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(job.signal.reason)));
      },
    },
    { retryDelayMs: 1 },
  );
  try {
    await page.fill('#search-kind', 'import');
    await page.fill('#search-group', 'acct-42');
    await page.click('#search button[type="submit"]');
    const found = page.locator(`#found tr[data-id="${id}"]`);
    await found.waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('#found tbody tr').count(), 1, 'one job of that kind and group');
    await found.locator('a').click();
    assert.equal(new URL(page.url()).hash, `#job/${id}`);
    // As JSON, whose keys MySQL stores in an order of its own.
    await until(async () => (await field('progress').textContent({ timeout: 1000 }).catch(() => '')) !== '');
    assert.deepEqual(JSON.parse((await field('progress').textContent())!), { rows: 40, of: 100 });
    assert.equal(await field('status').textContent(), 'claimed');
    assert.equal(await field('payload').textContent(), '{"file":"customers.csv"}');
    const errors = page.locator('#job-errors li');
    assert.equal(await errors.count(), 2);
    assert.match((await errors.nth(0).textContent()) ?? '', /^attempt 1 at .+: the file server is busy \(1\)at /);
    await page.screenshot({ path: `${OUTPUT}dashboard-job.png`, fullPage: true });

    await page.click('#job-cancel');
    await until(async () => (await page.locator('#job-result').textContent()) === 'running: its worker cancels it');
    await until(async () => (await field('status').textContent({ timeout: 1000 }).catch(() => null)) === 'cancelled');
    assert.equal(worker.counters.cancelled, 1);
  } finally {
    await worker.stop({ timeoutMs: 100 });
  }

  // By id, a delayed job, made due now from its page.
  const delayed = (await queue.findJobs({ kind: 'import', group: 'acct-7' }))[0]!.id;
  await page.fill('#search-kind', '');
  await page.fill('#search-group', '');
  await page.fill('#search-id', String(delayed));
  await page.click('#search button[type="submit"]');
  await page.locator(`#found tr[data-id="${delayed}"] a`).click();
  await until(async () => (await field('status').textContent({ timeout: 1000 }).catch(() => null)) === 'scheduled');
  await page.click('#job-run-now');
  await until(async () => (await page.locator('#job-result').textContent()) === 'due now');
  const [made] = await db.rows<{ status: string; due: number }>('SELECT status, run_after <= NOW(6) AS due FROM jobs WHERE id = ?', [delayed]);
  assert.deepEqual([made!.status, Number(made!.due)], ['unclaimed', 1]);
  await until(async () => (await field('status').textContent({ timeout: 1000 }).catch(() => null)) === 'unclaimed');

  // A failed job, opened from the failed list and requeued from its page.
  const broken = await queue.enqueue({ kind: 'broken' });
  await queue.fail(await queue.claim({ batchSize: 1, kinds: ['broken'] }), new Error('no such customer'), { maxAttempts: 1 });
  await page.locator(`#failed tr[data-id="${broken}"] a`).click();
  await until(async () => (await field('last error').textContent({ timeout: 1000 }).catch(() => null)) === 'no such customer');
  await page.click('#job-requeue');
  await until(async () => (await page.locator('#job-result').textContent()) === 'requeued');
  await until(async () => (await field('status').textContent({ timeout: 1000 }).catch(() => null)) === 'unclaimed');
  assert.deepEqual(dialogs, [], 'no script ran: no dialog opened');
});
