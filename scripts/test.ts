/**
 * `npm test` after the build: the suite against the server in JOBQ_TEST_SERVER_URL (default the
 * local mysql://root@127.0.0.1:3306), or against each of several servers at once when it lists
 * them separated by spaces:
 *
 *   JOBQ_TEST_SERVER_URL="mysql://root@127.0.0.1:3306 mysql://root@127.0.0.1:3308" npm test
 *
 * The unit tests (dist/test/unit/) use no server: they run once, and so do the few files whose
 * tests do not depend on the server's make (FIRST_SERVER_ONLY), on the first server named. The
 * files that share a server run in one pool, JOBQ_TEST_CONCURRENCY (default 4) at a time per server
 * named, taken in turns from each server's list, so that every server's suite ends at about the
 * same time; the files that take longest in CI start first, so that none of them begins near the
 * end. Each file has a database of its own. Beside them, one at a time per server, run the files
 * that start servers of their own (a Group Replication group, a private server or a replica, each
 * on ports of its own). The files that read counters of the whole server, which other files would
 * move, run once the other files of their server have ended, alone on it. The Galera file runs
 * after everything else, alone on the machine: beside the suites, a node of its cluster (MariaDB
 * 10.11.19) grew to 10-21 GB of memory within minutes in three full runs in a row, and the machine
 * thrashed until the kernel killed it; alone, never (8 runs, 308 MB at most). The growing node
 * spins in an InnoDB purge task's retry loop (open_purge_table, docs/operations.md); what starts it
 * is not known, and after a full run it still happens now and then, with nothing else running.
 *
 * Each file is a `node --test` process of its own, and its output is printed when it ends (with
 * several servers, each line prefixed with the server's address). A file that has not ended after
 * JOBQ_TEST_FILE_TIMEOUT_S seconds (default 600) is killed with everything it started and counts
 * as failed, so that a hang costs minutes, not the whole CI run. The failures are printed again at
 * the end, so that the tail of a long log names them. Exits non-zero if any file fails.
 */
import { spawn } from 'node:child_process';
import { childProcesses } from '../test/helpers/processes.js';
import { readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const testDir = fileURLToPath(new URL('../test/', import.meta.url));
const testsIn = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.test.js'))
    .sort()
    .map((name) => `${dir}${name}`);
const uses = (helper: string) => (file: string) => readFileSync(file, 'utf8').includes(`helpers/${helper}.js`);
/** Files that read counters of the whole server, which other files would move. */
const readsServerCounters = uses('server-counters');
/** Files that start servers of their own. */
const startsServers = (file: string) => uses('local-cluster')(file) || uses('private-server')(file);
/** Files that start a Galera cluster. */
const startsGalera = (file: string) => readFileSync(file, 'utf8').includes('LocalCluster.galera()');
const serverTests = testsIn(testDir);
const unitTests = testsIn(`${testDir}unit/`);
const shared = serverTests.filter((file) => !readsServerCounters(file) && !startsServers(file));
const ownServers = serverTests.filter((file) => !readsServerCounters(file) && startsServers(file) && !startsGalera(file));
const countersAlone = serverTests.filter(readsServerCounters);
const galeraLast = serverTests.filter(startsGalera);
/**
 * The shared files that took longest in CI (each file's time is in its log), longest first. They
 * start the pool: a file of two minutes begun near the end holds up the whole run by as much.
 */
const LONGEST_FIRST = [
  'monitoring-reads-use-indexes',
  'bad-input-fails-cleanly',
  'queue-contract',
  'attempts-count-what-the-job-did',
  'package-installs-from-a-tarball',
  'limits-hold-across-workers',
  'partitioned-table-runs-each-job-once',
  'progress-shows-on-a-terminal',
].map(sharedFile('LONGEST_FIRST'));
/**
 * Shared files whose tests do not depend on the server's make: with several servers, they run
 * against the first only. Input refused before any server is asked; the package as npm packs and
 * installs it (the README example it runs from there runs on every server in readme-example-runs).
 */
const FIRST_SERVER_ONLY = ['bad-input-fails-cleanly', 'package-installs-from-a-tarball'].map(sharedFile('FIRST_SERVER_ONLY'));
/** The shared test file of a name, for a list of such names. */
function sharedFile(list: string): (name: string) => string {
  return (name) => {
    const file = shared.find((path) => path.endsWith(`/${name}.test.js`));
    if (file === undefined) throw new Error(`scripts/test.ts: ${list} names ${name}, which is no shared test file`);
    return file;
  };
}
const concurrency = Number(process.env.JOBQ_TEST_CONCURRENCY ?? 4);
const fileTimeoutMs = 1000 * Number(process.env.JOBQ_TEST_FILE_TIMEOUT_S ?? 600);
const servers = (process.env.JOBQ_TEST_SERVER_URL ?? 'mysql://root@127.0.0.1:3306').split(/\s+/).filter((url) => url !== '');
/** What the unit tests are counted under, in place of a server. */
const UNIT = 'unit';
/** A server as the output names it (host:port), or UNIT. */
const label = (server: string) => (server === UNIT ? UNIT : new URL(server).host);
const startedAt = performance.now();

/** A failed test's TAP lines, from its `not ok` to the end of its YAML block, or why a file failed. */
interface Failure {
  server: string;
  lines: string[];
}
const failures: Failure[] = [];
interface Tally {
  pass: number;
  fail: number;
  skipped: number;
}
/** The tallies and whether every file passed, by server (and UNIT), in the order the end lists them. */
const tallies = new Map([UNIT, ...servers].map((server) => [server, { pass: 0, fail: 0, skipped: 0 } as Tally]));
const passedOn = new Map([UNIT, ...servers].map((server) => [server, true]));

/** The failures among one file's TAP lines, and its totals added to `tally`. */
function readResults(server: string, lines: readonly string[], tally: Tally): void {
  let open: { lines: string[]; end: string } | undefined;
  for (const line of lines) {
    const notOk = /^(\s*)not ok \d+ - /.exec(line);
    if (open !== undefined) {
      open.lines.push(line);
      if (line === open.end || open.lines.length > 60) open = undefined;
    } else if (notOk !== null) {
      open = { lines: [line], end: `${notOk[1]}  ...` };
      failures.push({ server, lines: open.lines });
    }
    const total = /^# (pass|fail|skipped) (\d+)$/.exec(line);
    if (total !== null) tally[total[1] as keyof Tally] += Number(total[2]);
  }
}

/** Every live descendant of `pid`, read before any of them is killed (orphans are adopted by init). */
function descendants(pid: number): number[] {
  return childProcesses(pid).flatMap((child) => [child.pid, ...descendants(child.pid)]);
}

/**
 * The CPU seconds of the runner's children that have ended, and of the processes they waited for
 * (Linux: cutime and cstime of /proc/self/stat, in its 100 ticks a second); undefined elsewhere.
 * Read as each file's process ends, the growth since the last read is that file's: what a test
 * run costs the machine, whose cores it shares, where its time on the clock does not say.
 */
function endedChildrenCpuSeconds(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}
let cpuReadAt = endedChildrenCpuSeconds();

/** Runs one test file against `server` (UNIT: the first, which it does not use) in a process group of its own; true when it passed. */
function runFile(server: string, file: string): Promise<boolean> {
  const env = { ...process.env, JOBQ_TEST_SERVER_URL: server === UNIT ? servers[0] : server };
  const child = spawn(process.execPath, ['--test', '--test-reporter=tap', file], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const started = performance.now();
  const output: string[] = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    // The whole group: the file's test process and whatever it started (workers, servers), and
    // the processes it started in groups of their own (the CLIs of startCli), which a kill of
    // its group leaves running.
    for (const pid of [child.pid!, ...descendants(child.pid!)]) {
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // Gone already, or not a group: the close event follows.
        }
      }
    }
  }, fileTimeoutMs);
  let cpu = '';
  child.on('exit', () => {
    const now = endedChildrenCpuSeconds();
    if (now !== undefined && cpuReadAt !== undefined) cpu = `, ${(now - cpuReadAt).toFixed(1)} s of CPU`;
    cpuReadAt = now;
  });
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines = output.join('').split('\n');
      if (lines.at(-1) === '') lines.pop();
      const prefix = servers.length > 1 ? `[${label(server)}] ` : '';
      const endedAt = ((performance.now() - startedAt) / 1000).toFixed(0);
      console.log(`${prefix}# ${relative(process.cwd(), file)}: ${((performance.now() - started) / 1000).toFixed(1)} s${cpu}, ended at ${endedAt} s`);
      for (const line of lines) console.log(prefix + line);
      const tally = tallies.get(server)!;
      readResults(server, lines, tally);
      if (timedOut) {
        tally.fail++;
        failures.push({ server, lines: [`${relative(process.cwd(), file)} did not end within ${fileTimeoutMs / 1000} s and was killed; its output is above`] });
      } else if (code !== 0 && !lines.some((line) => /^\s*not ok /.test(line))) {
        failures.push({ server, lines: [`${relative(process.cwd(), file)} exited with code ${code} and no failed test; its output is above`] });
      }
      resolve(code === 0 && !timedOut);
    });
  });
}

/** A test file and the server it runs against; `alone`: with no other file on that server. */
interface FileRun {
  server: string;
  file: string;
  alone?: boolean;
}
const onServer = (server: string, files: readonly string[], alone = false): FileRun[] => files.map((file) => ({ server, file, alone }));

/**
 * Runs the files, `atOnce` at a time, in their order but for those that must wait: a file to run
 * alone on its server waits until that server's other files have all ended, and holds back the
 * server's files after it until it ends. Notes each failure against its server.
 */
async function runFiles(runs: readonly FileRun[], atOnce: number): Promise<void> {
  const waiting = [...runs];
  const running = new Map<FileRun, Promise<void>>();
  const busy = (server: string, alone: boolean) => [...running.keys()].some((run) => run.server === server && (alone || run.alone));
  const mayStart = (run: FileRun) =>
    run.alone ? !busy(run.server, true) && !waiting.some((other) => other.server === run.server && !other.alone) : !busy(run.server, false);
  while (waiting.length > 0) {
    for (let next = waiting.find(mayStart); next !== undefined && running.size < atOnce; next = waiting.find(mayStart)) {
      const run = next;
      waiting.splice(waiting.indexOf(run), 1);
      running.set(
        run,
        runFile(run.server, run.file).then((passed) => {
          if (!passed) passedOn.set(run.server, false);
          running.delete(run);
        }),
      );
    }
    await Promise.race(running.values());
  }
  await Promise.all(running.values());
}

/** /proc/stat's busy and total ticks of all cores (Linux); undefined elsewhere. */
function coreTicks(): { busy: number; total: number } | undefined {
  try {
    const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1, 9).map(Number);
    const total = ticks.reduce((sum, n) => sum + n, 0);
    return { busy: total - ticks[3]! - ticks[4]!, total }; // less idle and iowait
  } catch {
    return undefined;
  }
}
const ticksAtStart = coreTicks();

// The shared files of every server in one pool, taken in turns from each server's list; the unit
// tests after the longest ones.
const inTurns = (files: readonly string[]) =>
  files.flatMap((file) => (FIRST_SERVER_ONLY.includes(file) ? servers.slice(0, 1) : servers).map((server) => ({ server, file })));
const sharedRuns = [...inTurns(LONGEST_FIRST), ...onServer(UNIT, unitTests), ...inTurns(shared.filter((file) => !LONGEST_FIRST.includes(file)))];
const countersRuns = servers.flatMap((server) => onServer(server, countersAlone, true));
const ownServersRuns = (server: string) => runFiles(onServer(server, ownServers), 1);
await Promise.all([runFiles([...sharedRuns, ...countersRuns], concurrency * servers.length), ...servers.map(ownServersRuns)]);
await runFiles(servers.flatMap((server) => onServer(server, galeraLast)), 1);
if (failures.length > 0) {
  console.log(`\n${failures.length} failed:`);
  for (const failure of failures) for (const line of failure.lines) console.log(`[${label(failure.server)}] ${line}`);
}
console.log('');
for (const [server, { pass, fail, skipped }] of tallies) {
  console.log(`${label(server)}: ${passedOn.get(server)! ? 'passed' : 'FAILED'} (${pass} passed, ${fail} failed, ${skipped} skipped)`);
}
const ticksAtEnd = coreTicks();
if (ticksAtStart !== undefined && ticksAtEnd !== undefined) {
  const busyShare = (ticksAtEnd.busy - ticksAtStart.busy) / (ticksAtEnd.total - ticksAtStart.total);
  console.log(`the machine's cores were busy ${(100 * busyShare).toFixed(0)} % of the run's ${((performance.now() - startedAt) / 1000).toFixed(0)} s`);
}
const all = [...tallies.values()].reduce((sum, tally) => ({ pass: sum.pass + tally.pass, fail: sum.fail + tally.fail, skipped: sum.skipped + tally.skipped }));
console.log(`all: ${all.pass} passed, ${all.fail} failed, ${all.skipped} skipped`);
process.exitCode = [...passedOn.values()].every(Boolean) ? 0 : 1;
