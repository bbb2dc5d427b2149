/**
 * Soak test (not part of CI): 4 generators and 16 consumers for 10 minutes while random workers
 * are killed with SIGKILL, then a drain. Reports RSS over time, errors, and the exactly-once
 * check. Usage: npm run build && node dist/scripts/soak.js [seconds] (default 600).
 * SOAK_SERVER_URL picks the server (default mysql://root@127.0.0.1:3306; its database
 * jobq_soak_* is made and dropped). Writes bench-results/soak.json.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { childProcesses } from '../test/helpers/processes.js';
import { parseClaimLines, startCli } from '../test/helpers/run-cli.js';
import { rssMiB } from './bench/server-probe.js';

const seconds = Number(process.argv[2] ?? 600);
const database = `jobq_soak_${randomBytes(4).toString('hex')}`;
const serverUrl = process.env.SOAK_SERVER_URL ?? 'mysql://root@127.0.0.1:3306';
const url = `${serverUrl.replace(/\/+$/, '')}/${database}`;

const jobq = (args: string[]) => startCli([...args, '--database-url', url]);

const admin = await mysql.createConnection(serverUrl);
try {
  if ((await jobq(['setup-tables']).done).code !== 0) throw new Error('setup-tables failed');
  const run = jobq(['start-processing', '-g', '4', '-c', '16', '--duration', String(seconds), '--lease', '5', '--keep-done']);
  const samples: Array<{ t: number; workers: number; maxRssMiB: number; sumRssMiB: number; parentRssMiB: number }> = [];
  const kills: Array<{ t: number; worker: string }> = [];
  const started = Date.now();
  let nextKill = started + randomInt(10_000, 30_000);
  let finished = false;
  void run.done.then(() => (finished = true));
  while (!finished) {
    await sleep(5000);
    if (finished) break;
    const t = Math.round((Date.now() - started) / 1000);
    const workers = childProcesses(run.pid);
    const rss = workers.map((w) => rssMiB(w.pid));
    samples.push({ t, workers: workers.length, maxRssMiB: Math.max(...rss), sumRssMiB: rss.reduce((a, b) => a + b, 0), parentRssMiB: rssMiB(run.pid) });
    if (Date.now() >= nextKill && workers.length > 0 && Date.now() - started < (seconds - 15) * 1000) {
      const victim = workers[randomInt(workers.length)]!;
      const role = /"role":"(\w+)","number":(\d+)/.exec(victim.cmdline);
      process.kill(victim.pid, 'SIGKILL');
      kills.push({ t, worker: role === null ? String(victim.pid) : `${role[1]} ${role[2]}` });
      nextKill = Date.now() + randomInt(10_000, 30_000);
    }
  }
  const result = await run.done;
  const drain = await jobq(['start-processing', '-g', '0', '-c', '4', '--until-empty', '--keep-done']).done;
  const claims = [...parseClaimLines(result.stdout), ...parseClaimLines(drain.stdout)];
  const times = new Map<number, number>();
  for (const id of claims.flatMap((c) => c.ids)) times.set(id, (times.get(id) ?? 0) + 1);
  const [rows] = await admin.query(
    `SELECT COUNT(*) AS total, COUNT(DISTINCT job_key) AS keys_, SUM(status = 'done') AS done, SUM(attempts > 1) AS retried FROM \`${database}\`.jobs`,
  );
  const table = (rows as Array<Record<string, string>>)[0]!;
  const [attemptRows] = await admin.query(`SELECT id, attempts FROM \`${database}\`.jobs WHERE attempts > 1`);
  const reclaimedAfterLease = new Set((attemptRows as Array<{ id: number }>).map((r) => Number(r.id)));
  const claimedTwice = [...times].filter(([, n]) => n > 1).map(([id]) => id);
  const report = {
    seconds,
    generators: 4,
    consumers: 16,
    exitCode: result.code,
    drainExitCode: drain.code,
    kills,
    errorLines: result.stderr.split('\n').filter((line) => line !== '' && !/died \(killed by SIGKILL\); restarting|worker crash/.test(line)),
    rss: samples,
    peakWorkerRssMiB: Math.max(...samples.map((s) => s.maxRssMiB)),
    peakParentRssMiB: Math.max(...samples.map((s) => s.parentRssMiB)),
    jobs: { rows: Number(table.total), distinctKeys: Number(table.keys_), done: Number(table.done), reclaimedAfterLease: Number(table.retried) },
    claimedIds: times.size,
    claimedTwice: claimedTwice.length,
    claimedTwiceWithoutLeaseExpiry: claimedTwice.filter((id) => !reclaimedAfterLease.has(id)).length,
    neverClaimed: Number(table.total) - times.size,
  };
  mkdirSync('bench-results', { recursive: true });
  writeFileSync('bench-results/soak.json', `${JSON.stringify(report, null, 2)}\n`);
  const { rss: _rss, ...brief } = report;
  console.log(JSON.stringify(brief, null, 2));
  const ok = report.jobs.rows === report.jobs.distinctKeys && report.jobs.done === report.jobs.rows && report.neverClaimed === 0 && report.claimedTwiceWithoutLeaseExpiry === 0;
  console.log(ok ? 'soak: exactly-once check passed' : 'soak: exactly-once check FAILED');
  process.exitCode = ok ? 0 : 1;
} finally {
  await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.end();
}
