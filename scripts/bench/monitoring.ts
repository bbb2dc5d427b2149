/**
 * What watching a queue costs on a big table (the bench's `monitoring` scenario): `stats()`, a
 * `/metrics` render and a full `SELECT COUNT(*)` (the reference: what a naive monitor would run),
 * timed in this process, medians of 5; a job's page and searches of the dashboard, over HTTP; then the server's CPU with `jobq dashboard` running and no
 * viewer, and with one viewer asking for the stats every 2 s as its page does, against the same
 * time with nothing running.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type mysql from 'mysql2/promise';
import { QueueMetrics } from '../../src/dashboard/metrics.js';
import { JobQueue } from '../../src/index.js';
import { startCli } from '../../test/helpers/run-cli.js';
import { readServerCounters } from './server-probe.js';

const KINDS = ['email', 'report', 'sms', 'export', 'sync'];
const PORT = 9791;
/** The dashboard's searches timed: a page of 20 each, some deep. */
const SEARCHES = [
  ['search: newest jobs', 'limit=20'],
  ['search: done, page 50', 'status=done&offset=1000&limit=20'],
  ['search: kind report', 'kind=report&limit=20'],
  ['search: kind email, waiting, page 50', 'kind=email&status=unclaimed&offset=1000&limit=20'],
];

export interface MonitoringFigures {
  jobs: number;
  statsMs: number;
  metricsMs: number;
  fullCountMs: number;
  /** The dashboard's answers, over HTTP: a job's page, and searches (medians of 5). */
  jobPageMs: number;
  searches: Array<{ name: string; ms: number }>;
  /** Server CPU, % of a core, over `seconds` each. */
  idleCpuPercent: number;
  dashboardNoViewerCpuPercent: number;
  dashboardOneViewerCpuPercent: number;
}

/** A table of `jobs` jobs (at least 2,000), half of them waiting over 5 kinds at 3 priorities, half done and kept: 2,000 enqueued, then doubled (the last time, in part). */
async function fill(url: string, admin: mysql.Connection, database: string, jobs: number): Promise<number> {
  const queue = await JobQueue.open({ url, createDatabase: true });
  try {
    await queue.setup({ recreate: true, force: true });
    await queue.enqueueMany(Array.from({ length: 2000 }, (_, n) => ({ kind: KINDS[n % KINDS.length]!, priority: n % 3 })));
  } finally {
    await queue.close();
  }
  const table = `\`${database}\`.jobs`;
  await admin.query(`UPDATE ${table} SET status = 'done' WHERE id % 2 = 0`);
  const columns = 'status, run_after, kind, payload, priority';
  let rows = 2000;
  while (rows < jobs) {
    const more = Math.min(rows, jobs - rows);
    await admin.query(`INSERT INTO ${table} (${columns}) SELECT ${columns} FROM ${table} ORDER BY id LIMIT ?`, [more]);
    rows += more;
  }
  await admin.query(`ANALYZE TABLE ${table}`);
  // The done jobs went in by hand: their kept count is set by a recount, as setup-tables would.
  const recounting = await JobQueue.open(url);
  await recounting.recount();
  await recounting.close();
  return rows;
}

async function medianMs(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  return Math.round(times.sort((a, b) => a - b)[2]!);
}

async function serverCpuPercent(admin: mysql.Connection, seconds: number, meanwhile: (signal: AbortSignal) => Promise<void> = async () => undefined): Promise<number> {
  const before = await readServerCounters(admin);
  const stop = new AbortController();
  const running = meanwhile(stop.signal);
  await sleep(seconds * 1000);
  stop.abort();
  await running;
  const after = await readServerCounters(admin);
  return Math.round((1000 * (after.cpuSeconds - before.cpuSeconds)) / seconds) / 10;
}

export async function measureMonitoring(url: string, admin: mysql.Connection, database: string, jobs: number, seconds: number): Promise<MonitoringFigures> {
  const rows = await fill(url, admin, database, jobs);
  const queue = await JobQueue.open(url);
  const metrics = new QueueMetrics(queue);
  const statsMs = await medianMs(() => queue.stats());
  const metricsMs = await medianMs(() => metrics.render());
  await queue.close();
  const fullCountMs = await medianMs(() => admin.query(`SELECT COUNT(*) FROM \`${database}\`.jobs`));
  const idleCpuPercent = await serverCpuPercent(admin, seconds);
  const dashboard = startCli(['dashboard', '--port', String(PORT), '--database-url', url]);
  const page = `http://127.0.0.1:${PORT}`;
  try {
    for (let tries = 0; ; tries++) {
      const up = await fetch(`${page}/`).then((response) => response.ok).catch(() => false);
      if (up) break;
      if (tries > 100) throw new Error(`jobq dashboard did not answer on ${page}`);
      await sleep(100);
    }
    const get = (path: string) => async () => {
      const response = await fetch(`${page}${path}`);
      if (!response.ok) throw new Error(`${path}: ${response.status}`);
      return response.arrayBuffer();
    };
    const jobPageMs = await medianMs(get(`/api/job?id=${Math.floor(rows / 2)}`));
    const searches = [];
    for (const [name, query] of SEARCHES) searches.push({ name, ms: await medianMs(get(`/api/jobs?${query}`)) });
    const dashboardNoViewerCpuPercent = await serverCpuPercent(admin, seconds);
    const dashboardOneViewerCpuPercent = await serverCpuPercent(admin, seconds, async (signal) => {
      while (!signal.aborted) {
        await fetch(`${page}/api/stats`).then((response) => response.arrayBuffer());
        await sleep(2000, undefined, { signal }).catch(() => undefined);
      }
    });
    return { jobs: rows, statsMs, metricsMs, fullCountMs, jobPageMs, searches, idleCpuPercent, dashboardNoViewerCpuPercent, dashboardOneViewerCpuPercent };
  } finally {
    dashboard.kill('SIGTERM');
    await dashboard.done;
  }
}
