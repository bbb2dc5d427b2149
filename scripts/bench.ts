import { quoteIdentifier, type QuotedIdentifier } from '../src/config/identifiers.js';
/**
 * `npm run bench`: how fast jobq moves jobs on this machine, every figure also given as a ratio
 * to a reference measured in the same run (the machine is noisy; ratios travel, jobs/s do not).
 *
 * Scenarios:
 *   reference  the plain claim-and-delete loop (BEGIN; SELECT id ... ORDER BY id LIMIT 100 FOR UPDATE
 *              SKIP LOCKED; DELETE; COMMIT) on the article's table, on K connections (K <= 10), at
 *              the server's default isolation, as the issue measured it. Not beyond 10 connections:
 *              on 16 it made MariaDB 10.11 abort itself ("Over 95 percent of the buffer pool is
 *              occupied by lock heaps"), every skipped row keeping its lock until COMMIT.
 *   drain      N queued jobs drained by `jobq start-processing -g 0 -c K --until-empty`
 *   steady     `jobq start-processing` defaults (2 generators, 10 consumers) for STEADY seconds
 *   backlog    the K=10 drain of 1,000,000 queued jobs against 50,000
 *   user path  timed as a user waits, from the command's start to its exit:
 *              work-api        one process running queue.work (no-op handler, concurrency 10)
 *              work-cli        `jobq work --handler noop.mjs --once` with its defaults
 *              work-4-procs    4 queue.work processes started at once, sharing no parent
 *              start-processing-wall  `start-processing -g 0 -c 10 --until-empty` over 100,000 jobs
 *              enqueue         enqueue() one job at a time vs a plain single-row INSERT loop
 *   operations the work-api drain against the same drain of the last build before priorities,
 *              and of the last build before the running totals (both built from git), every job
 *              at the default priority; and the drain with keepDone into a table that already
 *              holds 1,000,000 done jobs against an empty one. Each pair takes turns over
 *              BENCH_ROUNDS rounds (default 5); medians.
 *   replica    (not in the default set) the primary's CPU per job with the claims' candidates read
 *              on it and read on a replica: a private primary and GTID replica
 *              (scripts/private-server.sh, ports 3327 and 3328); the work-api drain of BENCH_JOBS
 *              queued jobs, and 2 enqueue() producers with one queue.work for STEADY seconds.
 *              Taking turns over BENCH_ROUNDS; medians. Skipped with one line when the pair does
 *              not start.
 *   galera     (not in the default set) 20,000 queued jobs drained by two `jobq work --once
 *              --consumers 4` started at once: on this server, and on a 3-node Galera cluster on
 *              this machine (scripts/galera-cluster.sh) with both on one node, and with one on
 *              node 2 and one on node 3, and the same with node 2 killed (SIGKILL) 2 s in, its
 *              worker moving to node 3 (server CPU then of nodes 1 and 3). Taking turns over
 *              BENCH_ROUNDS; medians. Then enqueue-to-start at 200 jobs a second from 2
 *              producers on node 1 to one queue.work on node 1, and on node 2 (BENCH_LATENCY_SECONDS
 *              each, taking turns). Skipped with one line when the cluster does not start.
 *   group      (not in the default set) the galera scenario on a 3-member MySQL Group Replication
 *              group in multi-primary mode (scripts/mysql-group.sh); run it with BENCH_SERVER_URL
 *              pointing at a MySQL server, so that "one server" is MySQL too.
 *   ab         (not in the default set) the user-path drains (work-api, keep-done-1m-done-rows,
 *              work-cli, work-4-procs, start-processing-wall), the enqueue() loop and the steady
 *              states (steady-start-processing, steady-user: 10 s each), enqueue-to-start at a
 *              rate (latency-200, latency-1000, and latency-1000-4-workers: 4 worker processes,
 *              the slowest one's percentiles), an idle worker's server CPU (idle), and the idle
 *              worker and latency-200 beside 100,000 jobs due in a day (idle-100k-delayed,
 *              latency-200-100k-delayed) of the build at
 *              BENCH_AB_REF (a git ref) against this build's (BENCH_AB_ONLY: some of them, by
 *              name), taking turns over BENCH_ROUNDS; medians: what a change on the hot path costs.
 *   limits     (not in the default set) limits on kinds: concurrency caps, rates and groups
 *              (limitScenarios, BENCH_LIMITS), each against its ideal rate or the same jobs
 *              unlimited.
 *   monitoring (not in the default set) what watching the queue costs on a table of
 *              BENCH_MONITORED_JOBS jobs (default 1,000,000: half waiting over 5 kinds, half done
 *              and kept): stats() and a /metrics render against a full SELECT COUNT(*) (medians of
 *              5), and the server's CPU over BENCH_MONITOR_SECONDS (default 10) with `jobq
 *              dashboard` running and no viewer, and with one viewer asking every 2 s, against
 *              the same time idle (scripts/bench/monitoring.ts).
 *   unique     (not in the default set) enqueue() of jobs with a unique key each against jobs with
 *              a key each, one at a time and 1,000 per enqueueMany (ENQUEUE_AB_SECONDS a turn),
 *              taking turns over BENCH_ROUNDS; medians.
 *   latency    (not in the default set) enqueue-to-start p50/p95/p99 at 200 and 1,000 jobs a
 *              second offered by 2 paced producer processes to one queue.work process, and at
 *              1,000 a second enqueued in the worker's own process (BENCH_LATENCY_SECONDS each);
 *              then the floor under them (bench/latency-floor.ts): the steps of a start by hand
 *              (an INSERT, a KILL QUERY wake-up, a 4-statement claim) against jobq's (enqueue(),
 *              the wake-up, claim()), medians of one at a time.
 *   pause      (not in the default set) the worker's pause after a light claim at its default
 *              against none (lightClaimPause): enqueue-to-start at 1,000 jobs a second, and the
 *              jobs produced a second by 2 producers at full speed, taking turns over BENCH_ROUNDS.
 *   partitions (not in the default set) the jobs table partitioned on id (HASH and KEY, into
 *              BENCH_PARTITIONS, default 8) against the unpartitioned one: start-processing
 *              drains with 10 and 16 consumers taking turns over BENCH_ROUNDS, the backlog
 *              drain and the steady state once each.
 *
 * Environment: BENCH_SERVER_URL (default mysql://root@127.0.0.1:3306: the server to measure on;
 * its database jobq_bench_* is made and dropped), BENCH_JOBS (default 200000), BENCH_CONSUMERS (default 1,2,4,10,16),
 * BENCH_STEADY_SECONDS (default 30), BENCH_BACKLOG (default 1000000; 0 skips it),
 * BENCH_PICK (the drains' --pick, default random-prefix), BENCH_SCENARIOS (default
 * demo,user,operations), BENCH_OPERATIONS (default priorities,totals,done-rows),
 * BENCH_BASELINE_PRIORITIES, BENCH_BASELINE_TOTALS, BENCH_AB_REF (git refs), BENCH_ROUNDS (default 5),
 * BENCH_PAYLOAD_BYTES (default 0: no payload; the JSON payload's size in the user-path drains).
 * Writes bench-results/latest.json and bench-results/drain-vs-consumers.svg (BENCH_RESULTS_DIR
 * for another folder).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { JobQueue, type KindLimit } from '../src/index.js';
import { articleTableSql } from '../src/queue/sql/schema.js';
import { DEFAULTS } from '../src/config/defaults.js';
import { cpuSecondsOf, readServerCounters, serverPid, readServerSettings, sampleRss, type ServerCounters } from './bench/server-probe.js';
import { buildBaseline } from './bench/baseline-build.js';
import { measureLatencyFloor } from './bench/latency-floor.js';
import { measureMonitoring } from './bench/monitoring.js';
import { lineChart } from './bench/svg-chart.js';
import { startCli, type CliResult } from '../test/helpers/run-cli.js';

const JOBS = Number(process.env.BENCH_JOBS ?? 200_000);
const CONSUMERS = (process.env.BENCH_CONSUMERS ?? '1,2,4,10,16').split(',').map(Number);
const STEADY_SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 30);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 1_000_000);
const BATCH = 100;
const MAX_REFERENCE_CONNECTIONS = 10;
const PICK = process.env.BENCH_PICK ?? 'random-prefix';
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'demo,user,operations').split(',');
// Earlier builds to measure a feature's cost against, in the same run: the last commits before
// priorities (schema 6) and before the running totals (schema 9).
const BASELINES = { priorities: process.env.BENCH_BASELINE_PRIORITIES ?? '9e01fc2', totals: process.env.BENCH_BASELINE_TOTALS ?? '4f81800' };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const OPERATIONS = (process.env.BENCH_OPERATIONS ?? 'priorities,totals,done-rows').split(',');
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 8);
const SERVER_URL = process.env.BENCH_SERVER_URL ?? 'mysql://root@127.0.0.1:3306';
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? 'bench-results';
const database = `jobq_bench_${randomBytes(4).toString('hex')}`;
const url = `${SERVER_URL}/${database}`;

const ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
const NODE_SCRIPT = (name: string, root = ROOT) => `${root}/dist/scripts/bench/${name}`;
const NOOP_HANDLER = `${ROOT}/scripts/bench/noop-handler.mjs`;
const JOBQ_BIN = `${ROOT}/bin/jobq.js`;
const execFileAsync = promisify(execFile);

interface Result {
  scenario: string;
  consumers: number;
  jobs: number;
  jobsPerSecond: number;
  emptyClaimPercent?: number;
  deadlocks: number;
  lockWaits: number;
  serverCpuPercent: number;
  peakChildRssMiB?: number;
  /** Peak RSS of the whole process tree (the command and its children). */
  peakTreeRssMiB?: number;
  extra?: Record<string, number>;
}

const admin = await mysql.createConnection({ uri: SERVER_URL, supportBigNumbers: true });
const results: Result[] = [];

const delta = (before: ServerCounters, after: ServerCounters, seconds: number) => ({
  deadlocks: after.deadlocks - before.deadlocks,
  lockWaits: after.rowLockWaits - before.rowLockWaits,
  serverCpuPercent: Math.round((100 * (after.cpuSeconds - before.cpuSeconds)) / seconds),
});

/** Runs the built `jobq` against the bench database, sampling its processes' memory. */
async function jobq(args: string[]): Promise<CliResult & { rss: { peakChildMiB: number } }> {
  const run = startCli([...args, '--database-url', url]);
  const rss = sampleRss(run.pid);
  const result = await run.done;
  return { ...result, rss: rss.stop() };
}

const summaryNumber = (stdout: string, key: string): number => {
  const match = new RegExp(`^${key} = ([\\d.]+)`, 'm').exec(stdout);
  if (match === null) throw new Error(`no "${key}" in the summary:\n${stdout}`);
  return Number(match[1]);
};

const emptyClaimPercent = (stdout: string): number => Number(/^empty claims = \d+ \(([\d.]+) %\)$/m.exec(stdout)?.[1]);

/** The payload of the jobs prefillJobq queues: none, or BENCH_PAYLOAD_BYTES of JSON. */
const PAYLOAD_BYTES = Number(process.env.BENCH_PAYLOAD_BYTES ?? 0);
const PAYLOAD = PAYLOAD_BYTES > 0 ? { payload: { data: 'x'.repeat(Math.max(0, PAYLOAD_BYTES - 11)) } } : {};

/**
 * Queues `count` demo jobs, and `delayed` more due in a day; into a fresh table unless `recreate`
 * is false; with another build's JobQueue if given; into a table partitioned as `layout` says
 * (unpartitioned by default).
 */
async function prefillJobq(count: number, { Queue = JobQueue, recreate = true, layout, delayed = 0 }: { Queue?: typeof JobQueue; recreate?: boolean; layout?: Layout; delayed?: number } = {}): Promise<void> {
  const queue = await Queue.open({ url, createDatabase: true });
  await queue.setup({ recreate, force: true, ...layout });
  for (const [jobs, timing] of [[count, {}], [delayed, { delaySeconds: 86_400 }]] as const) {
    for (let done = 0; done < jobs; done += 1000) await queue.enqueueMany(Array.from({ length: Math.min(1000, jobs - done) }, () => ({ ...timing, ...PAYLOAD })));
  }
  await queue.close();
  await admin.query(`ANALYZE TABLE \`${database}\`.jobs`);
}

async function reference(connections: number): Promise<Result> {
  await admin.query(`DROP TABLE IF EXISTS \`${database}\`.reference`);
  await admin.query(articleTableSql(`${quoteIdentifier(database)}.reference` as QuotedIdentifier));
  const letters = 'x'.repeat(64);
  for (let done = 0; done < JOBS; done += 1000) {
    const rows = Array.from({ length: Math.min(1000, JOBS - done) }, () => [letters, letters, 'unclaimed']);
    await admin.query(`INSERT INTO \`${database}\`.reference (d, e, status) VALUES ?`, [rows]);
  }
  const pool = await Promise.all(
    Array.from({ length: connections }, () => mysql.createConnection(url)),
  );
  const before = await readServerCounters(admin);
  const started = performance.now();
  // The obvious design, as the issue measured it: every connection scans the head of the queue.
  await Promise.all(
    pool.map(async (connection) => {
      for (;;) {
        try {
          await connection.query('BEGIN');
          const [rows] = await connection.query(
            `SELECT id FROM reference WHERE status = 'unclaimed' ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
          );
          const ids = (rows as Array<{ id: number }>).map((row) => row.id);
          if (ids.length === 0) {
            await connection.query('COMMIT');
            return;
          }
          await connection.query('DELETE FROM reference WHERE id IN (?)', [ids]);
          await connection.query('COMMIT');
        } catch (error) {
          // It deadlocks at REPEATABLE READ with several connections; retry like any client must.
          if (![1213, 1205].includes((error as { errno?: number }).errno ?? 0)) throw error;
          await connection.query('ROLLBACK');
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = await readServerCounters(admin);
  await Promise.all(pool.map((connection) => connection.end()));
  return { scenario: 'reference', consumers: connections, jobs: JOBS, jobsPerSecond: Math.round(JOBS / seconds), ...delta(before, after, seconds) };
}

async function drain(consumers: number, jobs: number, scenario = 'drain'): Promise<Result> {
  await prefillJobq(jobs);
  const before = await readServerCounters(admin);
  const run = await jobq(['start-processing', '-g', '0', '-c', String(consumers), '--until-empty', '-q', '--pick', PICK]);
  const after = await readServerCounters(admin);
  if (run.code !== 0) throw new Error(`drain failed (${run.code}): ${run.stderr}`);
  const consumed = summaryNumber(run.stdout, 'jobs consumed');
  const seconds = summaryNumber(run.stdout, 'consuming');
  if (consumed !== jobs) throw new Error(`drain consumed ${consumed} of ${jobs}`);
  return {
    scenario,
    consumers,
    jobs,
    jobsPerSecond: Math.round(consumed / seconds),
    emptyClaimPercent: emptyClaimPercent(run.stdout),
    ...delta(before, after, summaryNumber(run.stdout, 'elapsed')),
    peakChildRssMiB: Math.round(run.rss.peakChildMiB),
  };
}

async function steady(layout?: Layout): Promise<Result> {
  const queue = await JobQueue.open({ url, createDatabase: true });
  await queue.setup({ recreate: true, force: true, ...layout });
  await queue.close();
  const before = await readServerCounters(admin);
  // --keep-done keeps each job's insert and claim times, for the latency percentiles below.
  const run = await jobq(['start-processing', '--duration', String(STEADY_SECONDS), '--keep-done', '-q']);
  const after = await readServerCounters(admin);
  if (run.code !== 0) throw new Error(`steady run failed (${run.code}): ${run.stderr}`);
  const [rows] = await admin.query(
    `SELECT TIMESTAMPDIFF(MICROSECOND, created_at, owner_date) / 1000 AS ms FROM \`${database}\`.jobs WHERE status = 'done' ORDER BY ms`,
  );
  const latencies = (rows as Array<{ ms: string }>).map((row) => Number(row.ms));
  const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  const elapsed = summaryNumber(run.stdout, 'elapsed');
  const backlog = Number(/^\| unclaimed \|\s+(\d+) \|$/m.exec(run.stdout)?.[1]);
  return {
    scenario: 'steady',
    consumers: 10,
    jobs: summaryNumber(run.stdout, 'jobs consumed'),
    jobsPerSecond: Math.round(summaryNumber(run.stdout, 'jobs consumed') / elapsed),
    emptyClaimPercent: emptyClaimPercent(run.stdout),
    ...delta(before, after, elapsed),
    peakChildRssMiB: Math.round(run.rss.peakChildMiB),
    extra: {
      generatedPerSecond: Math.round(summaryNumber(run.stdout, 'jobs generated') / elapsed),
      backlogAtEnd: backlog,
      latencyP50ms: Math.round(percentile(50) * 10) / 10,
      latencyP95ms: Math.round(percentile(95) * 10) / 10,
      latencyP99ms: Math.round(percentile(99) * 10) / 10,
    },
  };
}

/** Runs node processes at once; wall seconds from their start to the last exit, peak tree RSS, their stdout. */
async function timedProcesses(argsList: string[][], env: Record<string, string> = {}): Promise<{ seconds: number; peakTreeMiB: number; outputs: string[] }> {
  const started = performance.now();
  let peakTreeMiB = 0;
  const outputs = await Promise.all(
    argsList.map(
      (args) =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, args, { env: { ...process.env, JOBQ_DATABASE_URL: url, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
          const rss = sampleRss(child.pid!, 100);
          let stdout = '';
          child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
          child.on('close', (code) => {
            peakTreeMiB += rss.stop().peakTreeMiB;
            if (code === 0) resolve(stdout);
            else reject(new Error(`${args.join(' ')} exited with ${code}:\n${stdout}`));
          });
        }),
    ),
  );
  return { seconds: (performance.now() - started) / 1000, peakTreeMiB, outputs };
}

/**
 * Waits (at most a minute) until InnoDB has purged what earlier runs deleted: a drain that starts
 * while the purge of the last one's 200,000 deletes still runs shares the cores with it, and the
 * same drain was seen 14 % apart within one run.
 */
async function waitForPurge(): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 60_000; await new Promise((resolve) => setTimeout(resolve, 250))) {
    const [rows] = await admin.query("SELECT count FROM information_schema.INNODB_METRICS WHERE name = 'trx_rseg_history_len'");
    if (Number((rows as Array<{ count: number }>)[0]?.count ?? 0) < 1000) return;
  }
}

/** A drain timed from the start of `processes` to the exit of the last one; `prefill` queues the jobs. */
async function userDrain(scenario: string, jobs: number, processes: string[][], consumers: number, prefill = () => prefillJobq(jobs)): Promise<Result> {
  await prefill();
  await waitForPurge();
  const before = await readServerCounters(admin);
  const run = await timedProcesses(processes);
  const after = await readServerCounters(admin);
  const [left] = (await admin.query(`SELECT COUNT(*) AS n FROM \`${database}\`.jobs WHERE status <> 'done'`))[0] as Array<{ n: number }>;
  if (Number(left!.n) !== 0) throw new Error(`${scenario} left ${left!.n} jobs`);
  const counters = run.outputs.flatMap((out) => (out.trim().startsWith('{') ? [JSON.parse(out) as { claims: number; emptyClaims: number }] : []));
  const claims = counters.reduce((sum, c) => sum + c.claims, 0);
  const empty = counters.reduce((sum, c) => sum + c.emptyClaims, 0);
  const emptyFromSummary = run.outputs.map((out) => emptyClaimPercent(out)).find((n) => !Number.isNaN(n));
  return {
    scenario,
    consumers,
    jobs,
    jobsPerSecond: Math.round(jobs / run.seconds),
    ...(claims > 0 ? { emptyClaimPercent: Math.round((1000 * empty) / claims) / 10 } : emptyFromSummary !== undefined ? { emptyClaimPercent: emptyFromSummary } : {}),
    ...delta(before, after, run.seconds),
    peakTreeRssMiB: Math.round(run.peakTreeMiB),
  };
}

const LIMITED_JOBS = Number(process.env.BENCH_LIMITED_JOBS ?? 100_000);
const LIMIT_SCENARIOS = (process.env.BENCH_LIMITS ?? 'cap,rate,groups,cpu').split(',');
const HANDLER_MS = 50;
const RATE_SECONDS = 30;
const CPU_SECONDS = Number(process.env.BENCH_CPU_SECONDS ?? 10);

/** A fresh table of `jobs` jobs of `kind` (in `groups` groups, one after another), under `limit` or none. */
async function prefillKind(jobs: number, kind: string, limit?: KindLimit, groups = 0): Promise<void> {
  const queue = await JobQueue.open({ url, createDatabase: true });
  await queue.setup({ recreate: true, force: true });
  // Limits outlive a recreated table (they are the queue's, in jobq_limits).
  if (limit === undefined) await queue.removeLimit(kind);
  else await queue.setLimit(kind, limit);
  const perGroup = groups === 0 ? jobs : jobs / groups;
  for (let done = 0; done < jobs; done += 1000) {
    await queue.enqueueMany(Array.from({ length: Math.min(1000, jobs - done) }, (_, i) => ({ kind, ...(groups > 0 && { group: `g${Math.floor((done + i) / perGroup)}` }) })));
  }
  await queue.close();
  await admin.query(`ANALYZE TABLE \`${database}\`.jobs`);
}

/** 4 `queue.work` processes at concurrency 20, with handlers of `handlerMs`, and more options. */
const fourWorkers = (handlerMs?: number, ...more: string[]) =>
  Array.from({ length: 4 }, () => [NODE_SCRIPT('work-drain.js'), '--concurrency', '20', ...(handlerMs === undefined ? [] : ['--handler-ms', String(handlerMs)]), ...more]);

const toIdeal = (result: Result, ideal: number) => ({ ...result, extra: { ...result.extra, idealJobsPerSecond: ideal, toIdeal: Math.round((100 * result.jobsPerSecond) / ideal) / 100 } });

/**
 * Limits (BENCH_LIMITS, default all):
 *   cap     LIMITED_JOBS jobs of a kind limited to 50 running at once, 4 workers at concurrency 20,
 *           50 ms handlers: against the ideal rate (50 / 0.05 s = 1,000 jobs/s), and the same
 *           drain without the limit against its own (80 / 0.05 s).
 *   rate    30 s of jobs of a kind limited to 1,000 claims a second, 4 workers at concurrency 20,
 *           no-op handlers: against 1,000 jobs/s, and the most claimed in any one second.
 *   groups  1,000 groups of 100 jobs (queued group after group) under 1 running per group, 4
 *           workers at concurrency 20, no-op handlers; the same jobs in groups without a limit,
 *           and without groups: ratios to the last.
 *   cpu     the server's CPU seconds per job done with a backlog of LIMITED_JOBS jobs of a kind
 *           limited to 3 running at once, 4 workers at concurrency 20, 50 ms handlers, over
 *           CPU_SECONDS; against a backlog of 1,000 under the same limit (what the backlog
 *           costs), the backlog without the limit at the same pace (one worker at concurrency
 *           3: what the limit costs), and without the limit at full pace (4 workers at 20).
 */
async function limitScenarios(): Promise<Result[]> {
  const results: Result[] = [];
  if (LIMIT_SCENARIOS.includes('cap')) {
    for (const limit of [50, undefined]) {
      const result = await userDrain(limit === undefined ? 'no limit, 4 x 20 handlers' : `limit ${limit}`, LIMITED_JOBS, fourWorkers(HANDLER_MS), 80, () =>
        prefillKind(LIMITED_JOBS, 'capped', limit === undefined ? undefined : { concurrency: limit }),
      );
      results.push(toIdeal(result, ((limit ?? 80) * 1000) / HANDLER_MS));
    }
  }
  if (LIMIT_SCENARIOS.includes('rate')) {
    const jobs = 1000 * RATE_SECONDS;
    const result = await userDrain('rate 1000/1s', jobs, fourWorkers(undefined, '--keep-done'), 80, () => prefillKind(jobs, 'rated', { rate: { jobs: 1000, perSeconds: 1 } }));
    results.push(toIdeal({ ...result, extra: { mostClaimedInOneSecond: await mostClaimedWithinSecond() } }, 1000));
  }
  if (LIMIT_SCENARIOS.includes('groups')) {
    const groups = 1000;
    const jobs = groups * 100;
    const drains = [
      await userDrain('no groups', jobs, fourWorkers(), 80, () => prefillKind(jobs, 'plain')),
      await userDrain(`${groups} groups`, jobs, fourWorkers(), 80, () => prefillKind(jobs, 'grouped', undefined, groups)),
      await userDrain(`${groups} groups, 1 per group`, jobs, fourWorkers(), 80, () => prefillKind(jobs, 'grouped', { groupConcurrency: 1 }, groups)),
    ];
    results.push(...ratio(drains));
  }
  if (LIMIT_SCENARIOS.includes('cpu')) {
    const runs = [
      { name: `backlog of ${LIMITED_JOBS}, limit 3`, backlog: LIMITED_JOBS, limit: 3, workers: fourWorkers(HANDLER_MS) },
      { name: 'backlog of 1000, limit 3', backlog: 1000, limit: 3, workers: fourWorkers(HANDLER_MS) },
      { name: `backlog of ${LIMITED_JOBS}, no limit, 1 worker at concurrency 3`, backlog: LIMITED_JOBS, workers: [[NODE_SCRIPT('work-drain.js'), '--concurrency', '3', '--handler-ms', String(HANDLER_MS)]] },
      { name: `backlog of ${LIMITED_JOBS}, no limit`, backlog: LIMITED_JOBS, workers: fourWorkers(HANDLER_MS) },
    ];
    const measured: Result[] = [];
    for (const { name, backlog, limit, workers } of runs) {
      await prefillKind(backlog, 'capped', limit === undefined ? undefined : { concurrency: limit });
      await waitForPurge();
      const before = await readServerCounters(admin);
      const run = await timedProcesses(workers.map((args) => [...args, '--seconds', String(CPU_SECONDS)]));
      const after = await readServerCounters(admin);
      const [[left]] = (await admin.query(`SELECT COUNT(*) AS n FROM \`${database}\`.jobs`)) as unknown as [[{ n: number }]];
      const done = backlog - Number(left.n);
      const serverCpuMsPerJob = Math.round((1e5 * (after.cpuSeconds - before.cpuSeconds)) / done) / 100;
      measured.push({ scenario: name, consumers: workers.length, jobs: done, jobsPerSecond: Math.round(done / run.seconds), ...delta(before, after, run.seconds), extra: { serverCpuMsPerJob } });
    }
    const [capped] = measured as [Result];
    results.push(...measured.map((row) => ({ ...row, extra: { ...row.extra, cappedCpuPerJobToThis: Math.round((100 * capped.extra!.serverCpuMsPerJob!) / row.extra!.serverCpuMsPerJob!) / 100 } })));
  }
  return results;
}

/** The monitoring scenario's figures as rows: the reads against a full count, the dashboard's CPU against idle. */
async function monitoringCost(): Promise<Result[]> {
  const seconds = Number(process.env.BENCH_MONITOR_SECONDS ?? 10);
  const m = await measureMonitoring(url, admin, database, Number(process.env.BENCH_MONITORED_JOBS ?? 1_000_000), seconds);
  const row = (scenario: string, serverCpuPercent: number, extra: Record<string, number>): Result => ({ scenario, consumers: 0, jobs: m.jobs, jobsPerSecond: 0, deadlocks: 0, lockWaits: 0, serverCpuPercent, extra });
  const read = (scenario: string, ms: number) => row(scenario, 0, { ms, toFullCount: Math.round((100 * ms) / m.fullCountMs) / 100 });
  return [
    read('full SELECT COUNT(*)', m.fullCountMs),
    read('stats()', m.statsMs),
    read('/metrics render', m.metricsMs),
    read("dashboard: a job's page", m.jobPageMs),
    ...m.searches.map(({ name, ms }) => read(`dashboard ${name}`, ms)),
    row(`idle, ${seconds} s`, m.idleCpuPercent, {}),
    row(`dashboard, no viewer, ${seconds} s`, m.dashboardNoViewerCpuPercent, {}),
    row(`dashboard, one viewer, ${seconds} s`, m.dashboardOneViewerCpuPercent, {}),
  ];
}

/** The most jobs claimed within any one second, by their claim times (owner_date of done jobs). */
async function mostClaimedWithinSecond(): Promise<number> {
  const [rows] = await admin.query(`SELECT UNIX_TIMESTAMP(owner_date) * 1000000 AS us FROM \`${database}\`.jobs WHERE status = 'done' ORDER BY owner_date`);
  const times = (rows as Array<{ us: string }>).map((row) => Number(row.us));
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= 1e6) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * enqueue() one at a time from one connection, with time-ordered and with random keys, against
 * plain INSERTs. The modes take turns, a few seconds each, over several rounds: a single long run
 * of each moved the ratio by 0.07 between two bench runs.
 */
async function enqueueRates(secondsPerRound: number, rounds: number): Promise<Result[]> {
  await prefillJobq(0);
  await admin.query(`DROP TABLE IF EXISTS \`${database}\`.plain_jobs`);
  await admin.query(articleTableSql(`${quoteIdentifier(database)}.plain_jobs` as QuotedIdentifier));
  await admin.query(`ALTER TABLE \`${database}\`.plain_jobs ADD COLUMN payload JSON NULL`);
  const modes = ['plain', 'jobq', 'jobq-uuid'];
  const totals = new Map(modes.map((mode) => [mode, { count: 0, deadlocks: 0, lockWaits: 0, serverCpuPercent: 0 }]));
  for (let round = 0; round < rounds; round++) {
    for (const mode of modes) {
      const before = await readServerCounters(admin);
      const run = await timedProcesses([[NODE_SCRIPT('enqueue-loop.js'), mode, String(secondsPerRound)]]);
      const after = await readServerCounters(admin);
      const total = totals.get(mode)!;
      const used = delta(before, after, secondsPerRound * rounds);
      total.count += (JSON.parse(run.outputs[0]!) as { count: number }).count;
      total.deadlocks += used.deadlocks;
      total.lockWaits += used.lockWaits;
      total.serverCpuPercent += used.serverCpuPercent;
    }
  }
  return modes.map((mode) => {
    const { count, ...rest } = totals.get(mode)!;
    return { scenario: `enqueue-${mode}`, consumers: 1, jobs: count, jobsPerSecond: Math.round(count / (secondsPerRound * rounds)), ...rest };
  });
}

/** Seconds each latency run enqueues for (BENCH_LATENCY_SECONDS, default 10). */
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 10);

/**
 * How long a job waits from enqueue() to its handler's start when the queue keeps up, with the
 * build in `root`: one queue.work process (concurrency 10, the default poll) and 2 producer
 * processes pacing enqueue() at `rate` jobs a second in all; with `inProcess`, the worker's own
 * process enqueues them instead.
 */
async function enqueueToStartRun(
  scenario: string,
  rate: number,
  {
    root = ROOT,
    Queue = JobQueue,
    inProcess = false,
    workers = 1,
    nodes,
    lightClaimPauseMs,
    delayed = 0,
  }: { root?: string; Queue?: typeof JobQueue; inProcess?: boolean; workers?: number; nodes?: { producers: string; worker: string }; lightClaimPauseMs?: number; delayed?: number } = {},
): Promise<Result> {
  const seconds = LATENCY_SECONDS;
  const consumer = [NODE_SCRIPT('steady-consumer.js', root), String(seconds + 2)];
  const processes = inProcess
    ? [[...consumer, String(rate)]]
    : [...Array.from({ length: workers }, () => consumer), ...[1, 2].map(() => [NODE_SCRIPT('enqueue-loop.js', root), 'paced', String(seconds), String(rate / 2)])];
  if (nodes === undefined) await prefillJobq(0, { Queue, delayed });
  else await freshQueueAt(nodes.producers);
  const before = await readServerCounters(admin);
  const env = {
    ...(nodes !== undefined && { JOBQ_DATABASE_URL: nodes.producers, BENCH_WORKER_URL: nodes.worker }),
    ...(lightClaimPauseMs !== undefined && { BENCH_LIGHT_CLAIM_PAUSE_MS: String(lightClaimPauseMs) }),
  };
  const { outputs } = await timedProcesses(processes, env);
  const after = await readServerCounters(admin);
  // With several workers, the slowest one's percentiles (each reports its own jobs').
  const consumers = outputs.slice(0, inProcess ? 1 : workers).map((out) => JSON.parse(out) as { handled: number; p50: number; p95: number; p99: number });
  const worst = (key: 'p50' | 'p95' | 'p99') => Math.max(...consumers.map((each) => each[key]));
  const handled = consumers.reduce((sum, each) => sum + each.handled, 0);
  return {
    scenario,
    consumers: 10 * consumers.length,
    jobs: handled,
    jobsPerSecond: Math.round(handled / seconds),
    // On a cluster, this server's counters say nothing.
    ...(nodes === undefined ? delta(before, after, seconds + 2) : { deadlocks: 0, lockWaits: 0, serverCpuPercent: 0 }),
    extra: { enqueueToStartP50ms: worst('p50'), enqueueToStartP95ms: worst('p95'), enqueueToStartP99ms: worst('p99') },
  };
}

/**
 * Enqueue-to-start at 200 and 1,000 jobs a second from other processes, then 1,000 a second
 * enqueued in the worker's own process, against the same rate from other processes.
 */
async function enqueueToStart(): Promise<Result[]> {
  const results = [await enqueueToStartRun('latency 200/s from 2 producer processes', 200), await enqueueToStartRun('latency 1000/s from 2 producer processes', 1000)];
  const inProcess = await enqueueToStartRun("latency 1000/s from the worker's own process", 1000, { inProcess: true });
  const p50 = (result: Result) => result.extra!.enqueueToStartP50ms!;
  return [...results, { ...inProcess, extra: { ...inProcess.extra, p50ToOtherProcesses: Math.round((100 * p50(inProcess)) / p50(results[1]!)) / 100 } }, ...(await latencyFloorRows())];
}

/** The latency floor (bench/latency-floor.ts) as two rows: the raw steps and jobq's, each with its sum; jobq's as a ratio to the raw. */
async function latencyFloorRows(): Promise<Result[]> {
  await prefillJobq(0);
  const floor = await measureLatencyFloor(url);
  const row = (scenario: string, extra: Record<string, number>): Result => ({ scenario, consumers: 1, jobs: 0, jobsPerSecond: 0, deadlocks: 0, lockWaits: 0, serverCpuPercent: 0, extra });
  const rawSum = floor.insert + floor.wake + floor.rawClaim;
  const jobqSum = floor.enqueue + floor.wake + floor.claim;
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return [
    row('latency floor: INSERT + wake-up + claim by hand', { roundTripMs: floor.roundTrip, insertMs: floor.insert, wakeMs: floor.wake, claimMs: floor.rawClaim, sumMs: round(rawSum) }),
    row('latency floor: enqueue() + wake-up + claim()', { enqueueMs: floor.enqueue, wakeMs: floor.wake, claimMs: floor.claim, sumMs: round(jobqSum), toHand: round(jobqSum / rawSum) }),
  ];
}

/**
 * The worker's pause after a light claim (lightClaimPauseMs) at its default against none, taking
 * turns over BENCH_ROUNDS: enqueue-to-start at 1,000 jobs a second from 2 paced producer
 * processes, and with 2 producers calling enqueue() as fast as they can for STEADY_AB_SECONDS
 * (jobs produced a second, and how long they waited to start).
 */
async function lightClaimPause(): Promise<Result[]> {
  const runs: Record<string, () => Promise<Result>> = {};
  for (const ms of [DEFAULTS.lightClaimPauseMs, 0]) {
    runs[`latency-1000-pause-${ms}`] = () => enqueueToStartRun('', 1000, { lightClaimPauseMs: ms });
    runs[`steady-user-pause-${ms}`] = () => producersAtFullSpeed({ lightClaimPauseMs: ms });
  }
  return alternating(runs);
}

/**
 * Two processes calling enqueue() one job at a time as fast as they can for STEADY_AB_SECONDS
 * while one queue.work process consumes, with the build in `root`: jobs produced a second, and
 * how long they waited from enqueue() to their handler's start.
 */
async function producersAtFullSpeed({ root = ROOT, Queue = JobQueue, lightClaimPauseMs }: { root?: string; Queue?: typeof JobQueue; lightClaimPauseMs?: number } = {}): Promise<Result> {
  await prefillJobq(0, { Queue });
  const producer = [NODE_SCRIPT('enqueue-loop.js', root), 'jobq', String(STEADY_AB_SECONDS)];
  const env: Record<string, string> = lightClaimPauseMs === undefined ? {} : { BENCH_LIGHT_CLAIM_PAUSE_MS: String(lightClaimPauseMs) };
  const before = await readServerCounters(admin);
  const run = await timedProcesses([producer, producer, [NODE_SCRIPT('steady-consumer.js', root), String(STEADY_AB_SECONDS + 2)]], env);
  const after = await readServerCounters(admin);
  const produced = run.outputs.slice(0, 2).reduce((sum, out) => sum + (JSON.parse(out) as { count: number }).count, 0);
  const consumer = JSON.parse(run.outputs[2]!) as { p50: number; p95: number; p99: number };
  return {
    scenario: '',
    consumers: 10,
    jobs: produced,
    jobsPerSecond: Math.round(produced / STEADY_AB_SECONDS),
    ...delta(before, after, STEADY_AB_SECONDS + 2),
    extra: { enqueueToStartP50ms: consumer.p50, enqueueToStartP95ms: consumer.p95, enqueueToStartP99ms: consumer.p99 },
  };
}

/**
 * Two producers calling enqueue() one job at a time while one queue.work process consumes; the
 * reference is two plain INSERT loops on their own. The backlog is sampled every second.
 */
async function steadyUser(seconds: number): Promise<Result[]> {
  const plain = await timedProcesses([1, 2].map(() => [NODE_SCRIPT('enqueue-loop.js'), 'plain', String(seconds)]));
  const plainRate = plain.outputs.reduce((sum, out) => sum + (JSON.parse(out) as { jobsPerSecond: number }).jobsPerSecond, 0);
  await prefillJobq(0);
  const backlog: number[] = [];
  const sampler = setInterval(() => {
    void admin.query(`SELECT COUNT(*) AS n FROM \`${database}\`.jobs WHERE status = 'unclaimed'`).then(([rows]) => backlog.push(Number((rows as Array<{ n: number }>)[0]!.n)));
  }, 1000);
  const before = await readServerCounters(admin);
  const run = await timedProcesses([
    ...[1, 2].map(() => [NODE_SCRIPT('enqueue-loop.js'), 'jobq', String(seconds)]),
    [NODE_SCRIPT('steady-consumer.js'), String(seconds + 2)],
  ]);
  const after = await readServerCounters(admin);
  clearInterval(sampler);
  const produced = run.outputs.slice(0, 2).reduce((sum, out) => sum + (JSON.parse(out) as { jobsPerSecond: number }).jobsPerSecond, 0);
  const consumer = JSON.parse(run.outputs[2]!) as { handled: number; p50: number; p95: number; p99: number };
  const inWindow = backlog.slice(0, seconds);
  return [
    { scenario: 'steady-user-plain-inserts', consumers: 0, jobs: plainRate * seconds, jobsPerSecond: plainRate, deadlocks: 0, lockWaits: 0, serverCpuPercent: 0 },
    {
      scenario: 'steady-user',
      consumers: 10,
      jobs: consumer.handled,
      jobsPerSecond: produced,
      ...delta(before, after, seconds + 2),
      peakTreeRssMiB: Math.round(run.peakTreeMiB),
      extra: {
        producedPerSecond: produced,
        producedToPlain: Math.round((100 * produced) / plainRate) / 100,
        backlogMax: Math.max(0, ...inWindow),
        backlogAtEnd: inWindow.at(-1) ?? 0,
        enqueueToStartP50ms: consumer.p50,
        enqueueToStartP95ms: consumer.p95,
        enqueueToStartP99ms: consumer.p99,
      },
    },
  ];
}

/** Takes turns between the named drains over `ROUNDS` rounds; one row per drain with its median jobs/s. */
async function alternating(drains: Record<string, () => Promise<Result>>): Promise<Result[]> {
  const runs = new Map<string, Result[]>(Object.keys(drains).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.entries(drains);
    if (round % 2 === 1) order.reverse();
    for (const [name, run] of order) runs.get(name)!.push(await run());
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return [...runs].map(([name, results]) => {
    const sorted = [...results].sort((a, b) => a.jobsPerSecond - b.jobsPerSecond);
    // Each figure of `extra` (CPU per job, say) is its own median over the rounds.
    const extra = Object.fromEntries(Object.keys(results[0]!.extra ?? {}).map((key) => [key, median(results.map((r) => r.extra![key]!))]));
    return { ...sorted[Math.floor(sorted.length / 2)]!, scenario: name, extra: { ...extra, rounds: ROUNDS, slowest: sorted[0]!.jobsPerSecond, fastest: sorted.at(-1)!.jobsPerSecond } };
  });
}

/**
 * 1,000,000 jobs kept as done, ended a day ago, in ten INSERT ... SELECTs (MySQL and MariaDB
 * alike). The job key is `given_key` from schema 20 on, `job_key` in a table of an earlier build.
 */
async function insertDoneRows(table: string): Promise<void> {
  const [[keyed]] = (await admin.query('SELECT COUNT(*) AS given FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?', [database, table, 'given_key'])) as unknown as [[{ given: number }]];
  const keyColumn = Number(keyed.given) === 1 ? 'given_key' : 'job_key';
  const digits = '(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';
  for (let block = 0; block < 10; block++) {
    await admin.query(`
      INSERT INTO \`${database}\`.${table} (${keyColumn}, kind, status, run_after)
      SELECT CONCAT('done-${block}-', a.n, b.n, c.n, d.n, e.n), 'k', 'done', NOW(6) - INTERVAL 1 DAY
        FROM ${digits} a, ${digits} b, ${digits} c, ${digits} d, ${digits} e`);
  }
}

/** The work-api drain of the build at `ref` against this build's, taking turns. */
async function againstBaseline(ref: string, names: [before: string, after: string]): Promise<Result[]> {
  const baseline = buildBaseline(ref);
  try {
    const { JobQueue: BaselineQueue } = (await import(`${baseline.dir}/dist/src/index.js`)) as { JobQueue: typeof JobQueue };
    return await alternating({
      [names[0]]: () => userDrain('', JOBS, [[`${baseline.dir}/dist/scripts/bench/work-drain.js`]], 10, () => prefillJobq(JOBS, { Queue: BaselineQueue })),
      [names[1]]: () => userDrain('', JOBS, [[NODE_SCRIPT('work-drain.js')]], 10),
    });
  } finally {
    baseline.remove();
  }
}

/** Seconds of each build's enqueue() loop in the ab scenario, and of each of its steady states. */
const ENQUEUE_AB_SECONDS = 4;
const STEADY_AB_SECONDS = 10;
const IDLE_AB_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);

/** The user-path drains of one build (checked out at `root`), each queueing its jobs with that build's JobQueue, and its enqueue() loop. */
function userPathDrains(root: string, Queue: typeof JobQueue): Record<string, () => Promise<Result>> {
  const work = (processes: number) => Array.from({ length: processes }, () => [NODE_SCRIPT('work-drain.js', root)]);
  const bin = `${root}/bin/jobq.js`;
  const prefill = (jobs: number) => () => prefillJobq(jobs, { Queue });
  const afterDoneRows = async () => {
    await prefillJobq(0, { Queue });
    await insertDoneRows('jobs');
    await prefillJobq(JOBS, { Queue, recreate: false });
  };
  return {
    'work-api': () => userDrain('', JOBS, work(1), 10, prefill(JOBS)),
    'keep-done-1m-done-rows': () => userDrain('', JOBS, [[NODE_SCRIPT('work-drain.js', root), '--keep-done']], 10, afterDoneRows),
    'work-cli': () => userDrain('', JOBS, [[bin, 'work', '--handler', NOOP_HANDLER, '--once']], 10, prefill(JOBS)),
    'work-4-procs': () => userDrain('', JOBS, work(4), 40, prefill(JOBS)),
    'start-processing-wall': () => userDrain('', 100_000, [[bin, 'start-processing', '-g', '0', '-c', '10', '--until-empty', '-q']], 10, prefill(100_000)),
    enqueue: async () => {
      await prefillJobq(0, { Queue });
      const run = await timedProcesses([[NODE_SCRIPT('enqueue-loop.js', root), 'jobq', String(ENQUEUE_AB_SECONDS)]]);
      const { count } = JSON.parse(run.outputs[0]!) as { count: number };
      return { scenario: '', consumers: 1, jobs: count, jobsPerSecond: Math.round(count / ENQUEUE_AB_SECONDS), deadlocks: 0, lockWaits: 0, serverCpuPercent: 0 };
    },
    // The steady states, STEADY_AB_SECONDS each: the demo's (2 generators inserting batches, 10
    // consumers), and the user path's (2 processes enqueue() one job at a time, one queue.work):
    // jobs consumed, and jobs produced, per second.
    'steady-start-processing': async () => {
      await prefillJobq(0, { Queue });
      const run = await timedProcesses([[bin, 'start-processing', '--duration', String(STEADY_AB_SECONDS), '-q']]);
      const consumed = summaryNumber(run.outputs[0]!, 'jobs consumed');
      return { scenario: '', consumers: 10, jobs: consumed, jobsPerSecond: Math.round(consumed / summaryNumber(run.outputs[0]!, 'elapsed')), deadlocks: 0, lockWaits: 0, serverCpuPercent: 0 };
    },
    // Enqueue-to-start from 2 producer processes (the extra figures; the rate is fixed).
    'latency-200': () => enqueueToStartRun('', 200, { root, Queue }),
    'latency-1000': () => enqueueToStartRun('', 1000, { root, Queue }),
    // The same with 4 worker processes: claims of a short queue by several workers at once.
    'latency-1000-4-workers': () => enqueueToStartRun('', 1000, { root, Queue, workers: 4 }),
    // One queue.work process idle on an empty queue for IDLE_AB_SECONDS: the server's CPU (ms a second).
    idle: () => idleWorker(root, Queue),
    // The same, and enqueue-to-start at 200 jobs a second, beside jobs due in a day (retries and
    // delayed jobs of a busy production queue), which no claim should read.
    'idle-100k-delayed': () => idleWorker(root, Queue, DELAYED_AB_JOBS),
    'latency-200-100k-delayed': () => enqueueToStartRun('', 200, { root, Queue, delayed: DELAYED_AB_JOBS }),
    'steady-user': () => producersAtFullSpeed({ root, Queue }),
  };
}

const DELAYED_AB_JOBS = 100_000;

/** One queue.work process idle for IDLE_AB_SECONDS on a queue of `delayed` jobs due in a day: the server's CPU (ms a second). */
async function idleWorker(root: string, Queue: typeof JobQueue, delayed = 0): Promise<Result> {
  await prefillJobq(0, { Queue, delayed });
  const before = await readServerCounters(admin);
  await timedProcesses([[NODE_SCRIPT('steady-consumer.js', root), String(IDLE_AB_SECONDS)]]);
  const after = await readServerCounters(admin);
  const serverCpuMsPerSecond = Math.round((10_000 * (after.cpuSeconds - before.cpuSeconds)) / IDLE_AB_SECONDS) / 10;
  return { scenario: '', consumers: 10, jobs: 0, jobsPerSecond: 0, deadlocks: 0, lockWaits: 0, serverCpuPercent: 0, extra: { serverCpuMsPerSecond } };
}

/**
 * enqueue() of jobs with a unique key of their own against the same with a key of their own, one
 * at a time and 1,000 per enqueueMany, taking turns: what the unique index costs a writer.
 */
async function uniqueEnqueues(): Promise<Result[]> {
  const loop = (mode: string) => async (): Promise<Result> => {
    await prefillJobq(0);
    const run = await timedProcesses([[NODE_SCRIPT('enqueue-loop.js'), mode, String(ENQUEUE_AB_SECONDS)]]);
    const { count } = JSON.parse(run.outputs[0]!) as { count: number };
    return { scenario: '', consumers: 1, jobs: count, jobsPerSecond: Math.round(count / ENQUEUE_AB_SECONDS), deadlocks: 0, lockWaits: 0, serverCpuPercent: 0 };
  };
  const single = await alternating({ 'enqueue-key': loop('key'), 'enqueue-unique': loop('unique') });
  const batched = await alternating({ 'enqueue-many-key': loop('key-batch'), 'enqueue-many-unique': loop('unique-batch') });
  return [...ratio(single), ...ratio(batched)];
}

/** Each user-path drain of the build at `ref` against this build's, taking turns. */
async function againstRef(ref: string): Promise<Result[]> {
  const baseline = buildBaseline(ref);
  try {
    const { JobQueue: BaselineQueue } = (await import(`${baseline.dir}/dist/src/index.js`)) as { JobQueue: typeof JobQueue };
    const before = userPathDrains(baseline.dir, BaselineQueue);
    const after = userPathDrains(ROOT, JobQueue);
    const results: Result[] = [];
    const only = process.env.BENCH_AB_ONLY?.split(',');
    for (const name of Object.keys(after).filter((key) => only === undefined || only.includes(key))) results.push(...ratio(await alternating({ [`${name}-${ref}`]: before[name]!, [`${name}-this-build`]: after[name]! })));
    return results;
  } finally {
    baseline.remove();
  }
}

/** What priorities and running totals cost the drain; a table full of done jobs against an empty one. */
async function operations(): Promise<Result[]> {
  const wanted = (pair: string) => OPERATIONS.includes(pair);
  const priorities = wanted('priorities') ? await againstBaseline(BASELINES.priorities, ['work-api-before-priorities', 'work-api-priorities']) : [];
  const totals = wanted('totals') ? await againstBaseline(BASELINES.totals, ['work-api-before-running-totals', 'work-api-running-totals']) : [];
  if (!wanted('done-rows')) return [...ratio(priorities), ...ratio(totals)];
  const keepDone = [NODE_SCRIPT('work-drain.js'), '--keep-done'];
  // Both insert the million done rows just before the drain (the server is still writing them
  // out while it runs); the first into a table of their own.
  const withDoneRows = (table: string) => async () => {
    await prefillJobq(0);
    await admin.query(`DROP TABLE IF EXISTS \`${database}\`.ballast`);
    await admin.query(`CREATE TABLE \`${database}\`.ballast LIKE \`${database}\`.jobs`);
    await insertDoneRows(table);
    await prefillJobq(JOBS, { recreate: false });
  };
  const doneRows = await alternating({
    'keep-done-empty-table': () => userDrain('', JOBS, [keepDone], 10, withDoneRows('ballast')),
    'keep-done-1m-done-rows': () => userDrain('', JOBS, [keepDone], 10, withDoneRows('jobs')),
  });
  return [...ratio(priorities), ...ratio(totals), ...ratio(doneRows)];
}

const REPLICA_PAIR = { primary: 3327, replica: 3328 };
const PRIVATE_SERVER_SCRIPT = fileURLToPath(new URL('../../scripts/private-server.sh', import.meta.url));

/** The primary's (and the replica's) CPU per job, candidates read on the primary against read on a replica. */
async function replicaCost(): Promise<Result[]> {
  const dir = (port: number) => `/tmp/jobq-bench-server-${port}`;
  const server = (...args: string[]) =>
    execFileSync('bash', [PRIVATE_SERVER_SCRIPT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, JOBQ_PRIVATE_SERVER_DIR: dir(Number(args[1])) } });
  const { primary, replica } = REPLICA_PAIR;
  try {
    server('start', String(primary));
    server('start-replica', String(replica), '--of', String(primary));
  } catch (error) {
    console.error(`replica: skipped, the private primary and replica did not start: ${String((error as { stderr?: string }).stderr ?? error).trim()}`);
    return [];
  }
  const primaryUrl = `mysql://root@127.0.0.1:${primary}/${database}`;
  const replicaUrl = `mysql://root@127.0.0.1:${replica}/${database}`;
  const cpuOf = (port: number) => cpuSecondsOf(Number(readFileSync(`${dir(port)}/mysqld.pid`, 'utf8')));
  const replicaConnection = await mysql.createConnection({ host: '127.0.0.1', port: replica, user: 'root' });
  /** Queues `count` jobs on the primary (none: an empty table) and waits until the replica has them. */
  const queueOnPrimary = async (count: number) => {
    const queue = await JobQueue.open({ url: primaryUrl, createDatabase: true });
    await queue.setup({ recreate: true, force: true });
    for (let done = 0; done < count; done += 1000) await queue.enqueueMany(Array.from({ length: Math.min(1000, count - done) }, () => ({})));
    await queue.close();
    for (;;) {
      const [rows] = await replicaConnection.query(`SELECT COUNT(*) AS n FROM \`${database}\`.jobs`).catch(() => [[{ n: -1 }]]);
      if (Number((rows as Array<{ n: number }>)[0]!.n) === count) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  /** Runs the processes, counting the two servers' CPU per job handled. */
  const measured = async (processes: string[][], withReplica: boolean, handled: (outputs: string[]) => number, seconds?: number): Promise<Result> => {
    const before = { primary: cpuOf(primary), replica: cpuOf(replica) };
    const run = await timedProcesses(processes, { JOBQ_DATABASE_URL: primaryUrl, ...(withReplica && { BENCH_REPLICA_URL: replicaUrl }) });
    const jobs = handled(run.outputs);
    const micros = (port: number, start: number) => Math.round((1e6 * (cpuOf(port) - start)) / jobs);
    const elapsed = seconds ?? run.seconds;
    return {
      scenario: '',
      consumers: 10,
      jobs,
      jobsPerSecond: Math.round(jobs / elapsed),
      deadlocks: 0,
      lockWaits: 0,
      serverCpuPercent: Math.round((100 * (cpuOf(primary) - before.primary)) / elapsed),
      extra: { primaryCpuMicrosPerJob: micros(primary, before.primary), replicaCpuMicrosPerJob: micros(replica, before.replica) },
    };
  };
  const drain = (withReplica: boolean) => async () => {
    await queueOnPrimary(JOBS);
    return measured([[NODE_SCRIPT('work-drain.js')]], withReplica, (outputs) => (JSON.parse(outputs[0]!) as { completed: number }).completed);
  };
  const steady = (withReplica: boolean) => async () => {
    await queueOnPrimary(0);
    const processes = [...[1, 2].map(() => [NODE_SCRIPT('enqueue-loop.js'), 'jobq', String(STEADY_SECONDS)]), [NODE_SCRIPT('steady-consumer.js'), String(STEADY_SECONDS)]];
    return measured(processes, withReplica, (outputs) => (JSON.parse(outputs[2]!) as { handled: number }).handled, STEADY_SECONDS);
  };
  try {
    return [
      ...ratio(await alternating({ 'replica-drain-candidates-on-primary': drain(false), 'replica-drain-candidates-on-replica': drain(true) })),
      ...ratio(await alternating({ 'replica-steady-candidates-on-primary': steady(false), 'replica-steady-candidates-on-replica': steady(true) })),
    ];
  } finally {
    await replicaConnection.end();
    server('destroy', String(replica));
    server('destroy', String(primary));
  }
}

const GALERA_JOBS = 20_000;
/** The 3-node clusters the bench can start: their script, the settings that place them, and how `start` is asked. */
const CLUSTERS = {
  galera: { script: 'galera-cluster.sh', base: 4400, dir: '/tmp/jobq-bench-galera', variables: ['JOBQ_GALERA_BASE_PORT', 'JOBQ_GALERA_DIR'], start: [] },
  group: { script: 'mysql-group.sh', base: 4800, dir: '/tmp/jobq-bench-group', variables: ['JOBQ_GROUP_BASE_PORT', 'JOBQ_GROUP_DIR'], start: ['--multi-primary'] },
};
/** When node 2 is killed in the node-loss round: before the end of a two-node drain (about 3 s here). */
const NODE_KILL_AFTER_MS = 2000;

/**
 * 20,000 jobs queued through `prefillUrl`, drained by one `jobq work --once --processes 4` per URL,
 * all started at once; `meanwhile` runs beside them (a node killed mid-drain). Jobs whose claim's
 * COMMIT answer was lost stay claimed until their lease runs out, after `--once` has ended: they
 * are counted, and every other job must have been handled once.
 */
async function twoWorkerDrain(prefillUrl: string, workerUrls: string[], serverCpuSeconds: () => number, meanwhile?: () => Promise<void>): Promise<Result> {
  await freshQueueAt(prefillUrl, GALERA_JOBS);
  const cpuBefore = serverCpuSeconds();
  const [run] = await Promise.all([
    timedProcesses(workerUrls.map((workerUrl) => [JOBQ_BIN, 'work', '--handler', NOOP_HANDLER, '--once', '--processes', '4', '--database-url', workerUrl])),
    meanwhile?.(),
  ]);
  const consumed = run.outputs.reduce((sum, out) => sum + summaryNumber(out, 'jobs consumed'), 0);
  const leftClaimed = await jobsLeft(prefillUrl);
  if (consumed + leftClaimed !== GALERA_JOBS) throw new Error(`the drain handled ${consumed} jobs and left ${leftClaimed}, not ${GALERA_JOBS} in all`);
  const retried = run.outputs.reduce((sum, out) => sum + Number(/^retried transactions = (\d+)/m.exec(out)?.[1] ?? 0), 0);
  return {
    scenario: '',
    consumers: 4 * workerUrls.length,
    jobs: GALERA_JOBS,
    jobsPerSecond: Math.round(GALERA_JOBS / run.seconds),
    emptyClaimPercent: Math.round((10 * run.outputs.reduce((sum, out) => sum + emptyClaimPercent(out), 0)) / run.outputs.length) / 10,
    deadlocks: retried,
    lockWaits: 0,
    serverCpuPercent: Math.round((100 * (serverCpuSeconds() - cpuBefore)) / run.seconds),
    peakTreeRssMiB: Math.round(run.peakTreeMiB),
    extra: { leftClaimed },
  };
}

/** A fresh jobs table through `databaseUrl` (a cluster node), holding `jobs` jobs. */
async function freshQueueAt(databaseUrl: string, jobs = 0): Promise<void> {
  const queue = await JobQueue.open({ url: databaseUrl, createDatabase: true });
  try {
    await queue.setup({ recreate: true, force: true });
    for (let done = 0; done < jobs; done += 1000) await queue.enqueueMany(Array.from({ length: Math.min(1000, jobs - done) }, () => ({})));
  } finally {
    await queue.close();
  }
}

/** Rows still in the jobs table (the drain deletes what it handles); on a cluster node, read once it has applied every write set committed before. */
async function jobsLeft(databaseUrl: string): Promise<number> {
  const connection = await mysql.createConnection(databaseUrl);
  try {
    const [variables] = await connection.query("SHOW VARIABLES WHERE Variable_name IN ('wsrep_on', 'group_replication_consistency')");
    const variable = (name: string) => (variables as Array<{ Variable_name: string; Value: string }>).find((row) => row.Variable_name === name)?.Value;
    if (variable('wsrep_on') === 'ON') await connection.query('SET SESSION wsrep_sync_wait = 1');
    if (variable('group_replication_consistency') !== undefined) await connection.query("SET SESSION group_replication_consistency = 'BEFORE'");
    const [rows] = await connection.query('SELECT COUNT(*) AS n FROM jobs');
    return Number((rows as Array<{ n: number }>)[0]!.n);
  } finally {
    await connection.end();
  }
}

/**
 * The two-worker drain on this server against a 3-node cluster (Galera, or Group Replication in
 * multi-primary mode); "deadlocks" are retried transactions (certification conflicts).
 */
async function clusterDrains(name: keyof typeof CLUSTERS): Promise<Result[]> {
  const settings = CLUSTERS[name];
  const script = fileURLToPath(new URL(`../../scripts/${settings.script}`, import.meta.url));
  const [basePortVariable, dirVariable] = settings.variables;
  const clusterEnv = { ...process.env, [basePortVariable]: String(settings.base), [dirVariable]: settings.dir };
  const cluster = (...args: string[]) => execFileSync('bash', [script, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: clusterEnv });
  try {
    cluster('start', ...settings.start);
  } catch (error) {
    console.error(`${name}: skipped, the cluster did not start: ${String((error as { stderr?: string }).stderr ?? error).trim()}`);
    return [];
  }
  try {
    const nodes = (...ns: number[]) => `mysql://root@${ns.map((n) => `127.0.0.1:${settings.base + n}`).join(',')}/${database}`;
    const nodesCpu = (which: number[]) => () => which.reduce((sum, n) => sum + cpuSecondsOf(Number(readFileSync(`${settings.dir}/node${n}/mysqld.pid`, 'utf8'))), 0);
    const killNode2 = async () => {
      await sleep(NODE_KILL_AFTER_MS);
      await execFileAsync('bash', [script, 'kill-node', '2'], { env: clusterEnv });
    };
    const localPid = await serverPid(admin);
    const localCpu = () => (localPid === undefined ? NaN : cpuSecondsOf(localPid));
    const drains = ratio(
      await alternating({
        'two-workers-one-server': () => twoWorkerDrain(url, [url, url], localCpu),
        [`${name}-two-workers-on-node-2`]: () => twoWorkerDrain(nodes(1), [nodes(2), nodes(2)], nodesCpu([1, 2, 3])),
        [`${name}-two-workers-on-nodes-2-and-3`]: () => twoWorkerDrain(nodes(1), [nodes(2), nodes(3)], nodesCpu([1, 2, 3])),
        // Each worker lists both nodes, its own first: when node 2 dies, its worker moves to node 3.
        [`${name}-node-2-killed-mid-drain`]: async () => {
          try {
            return await twoWorkerDrain(nodes(1), [nodes(2, 3), nodes(3, 2)], nodesCpu([1, 3]), killNode2);
          } finally {
            cluster('start-node', '2');
          }
        },
      }),
    );
    // Enqueue-to-start at 200 jobs a second from 2 producers on node 1 to one queue.work on node 2,
    // against the worker on node 1: a wake-up reaches the workers of the producer's own node only.
    const across = (workerNode: number) => () => enqueueToStartRun('', 200, { nodes: { producers: nodes(1), worker: nodes(workerNode) } });
    const latency = await alternating({ [`${name}-latency-200-worker-on-node-1`]: across(1), [`${name}-latency-200-worker-on-node-2`]: across(2) });
    return [...drains, ...latency];
  } finally {
    cluster('destroy');
  }
}

/** How the jobs table is partitioned, as `setup-tables --partitions N --partition-by M` makes it. */
type Layout = { partitions: number; partitionBy?: 'hash' | 'key' };
const LAYOUTS: Record<string, Layout> = {
  unpartitioned: { partitions: 0 },
  [`hash-${PARTITIONS}`]: { partitions: PARTITIONS, partitionBy: 'hash' },
  [`key-${PARTITIONS}`]: { partitions: PARTITIONS, partitionBy: 'key' },
};

/**
 * The partitioned table against the unpartitioned one, the article's process model on both:
 * drains of JOBS with 10 and 16 consumers taking turns over ROUNDS (medians), a 1,000,000-job
 * backlog and the steady state once each. Every drain timed from start-processing's start to its
 * exit.
 */
async function partitionCost(): Promise<Result[]> {
  const startProcessing = (consumers: number) => [[JOBQ_BIN, 'start-processing', '-g', '0', '-c', String(consumers), '--until-empty', '-q']];
  const drains = (consumers: number, jobs: number) =>
    Object.fromEntries(
      Object.entries(LAYOUTS).map(([name, layout]) => [`partitions-drain-c${consumers}-${name}`, () => userDrain('', jobs, startProcessing(consumers), consumers, () => prefillJobq(jobs, { layout }))]),
    );
  const results = [...ratio(await alternating(drains(10, JOBS))), ...ratio(await alternating(drains(16, JOBS)))];
  if (BACKLOG > 0) {
    const backlog = [];
    for (const [name, layout] of Object.entries(LAYOUTS)) {
      backlog.push(await userDrain(`partitions-backlog-${BACKLOG / 1000}k-${name}`, BACKLOG, startProcessing(10), 10, () => prefillJobq(BACKLOG, { layout })));
    }
    results.push(...ratio(backlog));
  }
  if (STEADY_SECONDS > 0) {
    const runs = [];
    for (const [name, layout] of Object.entries(LAYOUTS)) runs.push({ ...(await steady(layout)), scenario: `partitions-steady-${name}` });
    results.push(...ratio(runs));
  }
  return results;
}

/** A pair's rows with each one's ratio to the first of the pair. */
const ratio = (rows: Result[]) => rows.map((row) => ({ ...row, extra: { ...row.extra, toFirstOfPair: Math.round((100 * row.jobsPerSecond) / rows[0]!.jobsPerSecond) / 100 } }));

try {
  await admin.query(`CREATE DATABASE \`${database}\``);
  const settings = await readServerSettings(admin);
  const log = (result: Result) => {
    results.push(result);
    console.error(`${result.scenario} K=${result.consumers}: ${result.jobsPerSecond} jobs/s`);
  };
  // The one-connection reference is every ratio's base: always measured.
  for (const k of new Set([1, ...CONSUMERS.filter((k) => k <= MAX_REFERENCE_CONNECTIONS)])) log(await reference(k));
  if (SCENARIOS.includes('user')) {
    log(await userDrain('work-api', JOBS, [[NODE_SCRIPT('work-drain.js')]], 10));
    log(await userDrain('work-cli', JOBS, [[JOBQ_BIN, 'work', '--handler', NOOP_HANDLER, '--once']], 10));
    log(await userDrain('work-4-procs', JOBS, Array.from({ length: 4 }, () => [NODE_SCRIPT('work-drain.js')]), 40));
    log(await userDrain('start-processing-wall', 100_000, [[JOBQ_BIN, 'start-processing', '-g', '0', '-c', '10', '--until-empty', '-q']], 10));
    for (const result of await enqueueRates(4, 3)) log(result);
    if (STEADY_SECONDS > 0) for (const result of await steadyUser(STEADY_SECONDS)) log(result);
  }
  if (SCENARIOS.includes('operations')) for (const result of await operations()) log(result);
  if (SCENARIOS.includes('ab')) for (const result of await againstRef(process.env.BENCH_AB_REF ?? 'HEAD')) log(result);
  if (SCENARIOS.includes('replica')) for (const result of await replicaCost()) log(result);
  for (const name of ['galera', 'group'] as const) if (SCENARIOS.includes(name)) for (const result of await clusterDrains(name)) log(result);
  if (SCENARIOS.includes('partitions')) for (const result of await partitionCost()) log(result);
  if (SCENARIOS.includes('limits')) for (const result of await limitScenarios()) log(result);
  if (SCENARIOS.includes('monitoring')) for (const result of await monitoringCost()) log(result);
  if (SCENARIOS.includes('unique')) for (const result of await uniqueEnqueues()) log(result);
  if (SCENARIOS.includes('latency')) for (const result of await enqueueToStart()) log(result);
  if (SCENARIOS.includes('pause')) for (const result of await lightClaimPause()) log(result);
  if (SCENARIOS.includes('demo')) {
    for (const k of CONSUMERS) log(await drain(k, JOBS));
    if (STEADY_SECONDS > 0) log(await steady());
    if (BACKLOG > 0) {
      log(await drain(10, 50_000, 'backlog-50k'));
      log(await drain(10, BACKLOG, `backlog-${BACKLOG / 1000}k`));
    }
  }

  const ref = results.find((r) => r.scenario === 'reference' && r.consumers === 1)!.jobsPerSecond;
  const rows = results.map((r) => ({ ...r, ratioToReference: Math.round((100 * r.jobsPerSecond) / ref) / 100 }));
  const machine = { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.type()} ${os.release()}` };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const report = { date: new Date().toISOString(), machine, server: settings, jobs: JOBS, batchSize: BATCH, results: rows };
  writeFileSync(`${RESULTS_DIR}/latest.json`, `${JSON.stringify(report, null, 2)}\n`);
  const series = (scenario: string, name: string, colour: string) => ({
    name,
    colour,
    points: rows.filter((r) => r.scenario === scenario).map((r): [number, number] => [r.consumers, r.jobsPerSecond]),
  });
  writeFileSync(
    `${RESULTS_DIR}/drain-vs-consumers.svg`,
    lineChart(`Draining ${JOBS.toLocaleString('en-US')} jobs, batch ${BATCH}`, 'consumers (connections)', 'jobs/s', [
      series('drain', 'jobq', '#1f77b4'),
      series('reference', 'plain SKIP LOCKED loop', '#d62728'),
    ]),
  );

  console.log(`machine: ${machine.cpus} x ${machine.cpuModel}, ${machine.memoryGiB} GiB, node ${machine.node}`);
  console.log(`server: ${settings.version}, buffer pool ${Number(settings.innodb_buffer_pool_size) / 2 ** 20} MiB, flush_log_at_trx_commit=${settings.innodb_flush_log_at_trx_commit}, log_bin=${settings.log_bin}`);
  console.log('');
  console.log('| scenario | consumers | jobs | jobs/s | x reference | empty claims % | deadlocks | lock waits | server CPU % | peak child RSS MiB | peak tree RSS MiB |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of rows) {
    console.log(
      `| ${r.scenario} | ${r.consumers} | ${r.jobs} | ${r.jobsPerSecond} | ${r.ratioToReference.toFixed(2)} | ${r.emptyClaimPercent ?? ''} | ${r.deadlocks} | ${r.lockWaits} | ${r.serverCpuPercent} | ${r.peakChildRssMiB ?? ''} | ${r.peakTreeRssMiB ?? ''} |`,
    );
  }
  for (const r of rows) if (r.extra !== undefined) console.log(`${r.scenario}: ${JSON.stringify(r.extra)}`);
} finally {
  await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.end();
}
