import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { queueForTests } from './helpers/queue-fixtures.js';
import { startCli } from './helpers/run-cli.js';
import { waitUntil } from './helpers/wait.js';

const HANDLER = fileURLToPath(new URL('../../test/fixtures/lease-watch-handler.mjs', import.meta.url));
const context = queueForTests();

test('a worker frozen past its lease: its handler is signalled, it reports the job lost, not completed', async () => {
  const { queue, db } = context;
  await db.admin.query('CREATE TABLE events (pid INT NOT NULL, what VARCHAR(255) NOT NULL)');
  const id = await queue.enqueue({ kind: 'frozen' });
  const frozen = startCli(['work', '--handler', HANDLER, '--lease', '1', '--metrics-port', '0', '--database-url', db.url], { JOBQ_DATABASE_URL: db.url });
  const metricsUrl = (await frozen.waitFor(/metrics on (http:\S+)/))[1]!;
  const events = async (pid: number) => (await db.rows<{ what: string }>('SELECT what FROM events WHERE pid = ?', [pid])).map((row) => row.what);
  await waitUntil(async () => (await events(frozen.pid)).includes(`started ${id}`), 'the handler runs');
  // A VM pause, a debugger, an event loop blocked: the lease is not renewed. Not in the middle of
  // a claim turn, though: one that renews the lease holds the job's row lock, and every other
  // worker would skip the job (SKIP LOCKED) until the frozen one ran again; a turn may hold a lane
  // row, which another worker's claim may wait for (up to MySQL's lock wait timeout, 50 s: a CI
  // run saw the other worker miss the job for 30 s), and the kept counts' rows, which another
  // worker's claim waits for (another CI run). So the worker stays frozen only while it has no
  // transaction open: neither the job's row nor a lane row is locked (the locks are tried), and
  // information_schema.INNODB_TRX shows no transaction of a connection to the test's database but
  // this one. That table is a copy the server refreshes at most every 0.1 s (in a CI run it missed
  // a turn that had just taken a lane): it is read 0.2 s after the freeze, and the frozen worker
  // starts nothing meanwhile. lease-expiry-reclaims-job.test.ts covers a worker frozen in the
  // middle of a claim.
  const nothingLocked = async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    await db.admin.query('START TRANSACTION');
    try {
      const [job] = (await db.admin.query('SELECT id FROM jobs WHERE id = ? FOR UPDATE SKIP LOCKED', [id])) as unknown as [unknown[]];
      const [free] = (await db.admin.query("SELECT lane FROM jobq_lanes WHERE queue = 'jobs' FOR UPDATE SKIP LOCKED")) as unknown as [unknown[]];
      const [[{ lanes }]] = (await db.admin.query("SELECT COUNT(*) AS lanes FROM jobq_lanes WHERE queue = 'jobs'")) as unknown as [[{ lanes: number }]];
      const [[{ open }]] = (await db.admin.query(
        'SELECT COUNT(*) AS open FROM information_schema.INNODB_TRX AS t JOIN information_schema.PROCESSLIST AS p ON p.ID = t.trx_mysql_thread_id WHERE p.DB = DATABASE() AND p.ID <> CONNECTION_ID()',
      )) as unknown as [[{ open: number }]];
      return job.length === 1 && free.length === Number(lanes) && Number(open) === 0;
    } finally {
      await db.admin.query('ROLLBACK');
    }
  };
  for (let attempt = 1; ; attempt++) {
    process.kill(frozen.pid, 'SIGSTOP');
    if ((await nothingLocked()) || attempt === 100) break;
    process.kill(frozen.pid, 'SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // A worker left stopped keeps its connections, and with them its open transaction's locks (the
  // test database could not be dropped after); one left running would claim the next test's job.
  try {
    // Another worker takes the job once its lease has run out, and completes it.
    const other = queue.work(async () => undefined, { leaseSeconds: 30 });
    const completedByOther: number[] = [];
    other.on('completed', (job) => completedByOther.push(job.id));
    try {
      await waitUntil(() => completedByOther.includes(id), 'the other worker runs the job');
    } finally {
      await other.stop();
    }
    process.kill(frozen.pid, 'SIGCONT');
    await frozen.waitFor(new RegExp(`worker 1: warning: job ${id}: its lease ran out while its handler ran`)).catch(async (error: Error) => {
      throw new Error(`${error.message}\nevents of the frozen worker: ${JSON.stringify(await events(frozen.pid))}`);
    });
    await waitUntil(async () => (await events(frozen.pid)).length === 2, 'the frozen handler returns');
    assert.deepEqual(await events(frozen.pid), [`started ${id}`, `signal: the lease of job ${id} ran out: another worker may run it now`]);
    const metrics = await (await fetch(metricsUrl)).text();
    assert.match(metrics, /^jobq_worker_jobs_lost_total 1$/m);
    assert.match(metrics, /^jobq_worker_jobs_completed_total 0$/m, 'the lost job is not counted as completed');
    frozen.kill('SIGTERM');
    const { code, stdout, stderr } = await frozen.done;
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^jobs consumed = 0$/m);
  } finally {
    frozen.kill('SIGKILL'); // gone already unless the test failed
  }
});

test("a worker whose renewal finds its job another worker's counts the lease lost within a lease, however late its clock says it ends", async () => {
  const { queue, db } = context;
  const id = await queue.enqueue({ kind: 'taken' });
  const started: number[] = [];
  let signalled: string | undefined;
  const lost: number[] = [];
  const worker = queue.work(
    async (job) => {
      started.push(job.id);
      await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
      signalled = (job.signal.reason as Error).message;
    },
    { leaseSeconds: 3 },
  );
  worker.on('lost', (job) => lost.push(job.id));
  try {
    await waitUntil(() => started.includes(id), 'the handler runs');
    // What a freeze leaves behind (a paused VM, a stopped process whose renewal's answer it reads
    // only once it runs again): the lease ran out in the server and another worker claimed the
    // job, while the worker's own view of the lease still has time left. A renewal of the worker
    // may land between the two statements: then the lease is made to run out again.
    let other;
    for (let attempt = 1; attempt <= 20 && other === undefined; attempt++) {
      await db.admin.query('UPDATE jobs SET run_after = NOW(6) - INTERVAL 1 SECOND WHERE id = ?', [id]);
      const claim = await queue.claim({ batchSize: 1, leaseSeconds: 60 });
      if (claim.jobs.length === 1) other = claim;
    }
    assert.ok(other !== undefined && other.jobs[0]!.id === id, 'another worker claimed the job');
    // The worker's renewals change nothing now; were they believed, its lease would never end.
    await waitUntil(() => signalled !== undefined, 'the handler is told its lease ran out', { timeoutMs: 10_000 });
    assert.equal(signalled, `the lease of job ${id} ran out: another worker may run it now`);
    await waitUntil(() => lost.includes(id), 'the worker reports the job lost');
    await queue.complete(other);
    assert.deepEqual(await db.rows('SELECT id FROM jobs WHERE id = ?', [id]), [], "the other worker's claim settles the job");
  } finally {
    await worker.stop();
  }
});
