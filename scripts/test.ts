/**
 * `npm test` after the build: the suite against the server in JOBQ_TEST_SERVER_URL (default the
 * local mysql://root@127.0.0.1:3306), or against each of several servers at once when it lists
 * them separated by spaces:
 *
 *   JOBQ_TEST_SERVER_URL="mysql://root@127.0.0.1:3306 mysql://root@127.0.0.1:3308" npm test
 *
 * Against each server, the unit tests (dist/test/unit/, no server) and the files that share the
 * server run JOBQ_TEST_CONCURRENCY (default 4) at a time: each file has a database of its own.
 * Beside them, one at a time, run the files that start servers of their own (a Galera cluster, a
 * Group Replication group, a private server or a replica, each on ports of its own). The files
 * that read counters of the whole server, which other files would move, run last, alone on it.
 * Each server's run is a process of its own; with several, their lines are prefixed with the
 * server's address. The failures are printed again at the end, so that the tail of a long log
 * names them. Exits non-zero if any run fails.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
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
const serverTests = testsIn(testDir);
const shared = [...testsIn(`${testDir}unit/`), ...serverTests.filter((file) => !readsServerCounters(file) && !startsServers(file))];
const ownServers = serverTests.filter((file) => !readsServerCounters(file) && startsServers(file));
const countersAlone = serverTests.filter(readsServerCounters);
/** Files with servers of their own at once: each cluster or private server is several more processes on the machine. */
const OWN_SERVERS_AT_ONCE = 1;
const concurrency = Number(process.env.JOBQ_TEST_CONCURRENCY ?? 4);
const servers = (process.env.JOBQ_TEST_SERVER_URL ?? 'mysql://root@127.0.0.1:3306').split(/\s+/).filter((url) => url !== '');

/** A failed test's TAP lines, from its `not ok` to the end of its YAML block. */
interface Failure {
  server: string;
  lines: string[];
  end: string;
}
const failures: Failure[] = [];

function nodeTest(server: string, files: string[], filesAtOnce: number): Promise<number> {
  const env = { ...process.env, JOBQ_TEST_SERVER_URL: server };
  const child = spawn(process.execPath, ['--test', `--test-concurrency=${filesAtOnce}`, ...files], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = servers.length > 1 ? `[${new URL(server).host}] ` : '';
  let open: Failure | undefined;
  const onLine = (line: string) => {
    console.log(prefix + line);
    const notOk = /^(\s*)not ok \d+ - /.exec(line);
    if (open !== undefined) {
      open.lines.push(line);
      if (line === open.end || open.lines.length > 60) open = undefined;
    } else if (notOk !== null) {
      open = { server, lines: [line], end: `${notOk[1]}  ...` };
      failures.push(open);
    }
  };
  createInterface({ input: child.stdout! }).on('line', onLine);
  createInterface({ input: child.stderr! }).on('line', (line) => console.log(prefix + line));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128))));
}

async function run(server: string): Promise<number> {
  const sharing = async () => {
    const code = await nodeTest(server, shared, concurrency);
    const alone = await nodeTest(server, countersAlone, 1);
    return code !== 0 ? code : alone;
  };
  const codes = await Promise.all([sharing(), nodeTest(server, ownServers, OWN_SERVERS_AT_ONCE)]);
  return codes.find((code) => code !== 0) ?? 0;
}

const codes = await Promise.all(servers.map(run));
if (failures.length > 0) {
  console.log(`\n${failures.length} failed:`);
  for (const failure of failures) for (const line of failure.lines) console.log(`[${new URL(failure.server).host}] ${line}`);
}
if (servers.length > 1) for (const [i, server] of servers.entries()) console.log(`${new URL(server).host}: ${codes[i] === 0 ? 'passed' : `FAILED (exit ${codes[i]})`}`);
process.exitCode = codes.some((code) => code !== 0) ? 1 : 0;
