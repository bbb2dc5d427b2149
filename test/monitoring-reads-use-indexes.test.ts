import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { quoteIdentifier } from '../src/config/identifiers.js';
import { JobQueue } from '../src/index.js';
import * as statsSql from '../src/queue/sql/stats.js';
import * as failedSql from '../src/queue/sql/failed-jobs.js';
import * as searchSql from '../src/queue/sql/job-search.js';
import * as jobSql from '../src/queue/sql/job-info.js';
import { JOB_STATUSES, type JobStatus } from '../src/queue/types.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

// Every read that stats(), the dashboard and /metrics make of the jobs table is an index dive or
// a bounded range, never a scan, by the server's own plan for it on a table of a million jobs
// (stats-reads-are-bounded.test.ts counts the entries such reads take on a smaller one). The
// kept counts a recount sets on such a table agree with a full count.

let db: TestDatabase;
let queue: JobQueue;
const table = quoteIdentifier('jobs');
const KINDS = ['email', 'export', 'report', 'sms', 'sync'];
const JOBS = 1_024_000;

before(async () => {
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
  // 2,000 jobs of 5 kinds at 3 priorities, some in groups, some delayed; doubled nine times.
  await queue.enqueueMany(
    Array.from({ length: 2000 }, (_, n) => ({
      kind: KINDS[n % KINDS.length]!,
      priority: n % 3,
      ...(n % 4 === 0 && { group: `acct-${n % 7}` }),
      ...(n % 100 === 0 && { delaySeconds: 3600 }),
    })),
  );
  await queue.claim({ batchSize: 20, ownerId: 7, leaseSeconds: 600 });
  await db.admin.query("UPDATE jobs SET status = 'done' WHERE status = 'unclaimed' AND id % 2 = 0");
  await db.admin.query("UPDATE jobs SET status = 'failed', last_error = 'boom' WHERE status = 'unclaimed' AND id % 9 = 1");
  // Not written to the binary log (MySQL's private server keeps one, for replicas): the plans are
  // the same, and the server spent 26 s of CPU on the million rows against 30.5 s logging them.
  await db.admin.query('SET SESSION sql_log_bin = 0');
  const columns = 'status, owner_id, run_after, claim_token, kind, payload, priority, job_group, last_error';
  for (let rows = 2000; rows < JOBS; rows *= 2) await db.admin.query(`INSERT INTO jobs (${columns}) SELECT ${columns} FROM jobs`);
  await db.admin.query('ANALYZE TABLE jobs');
});
after(async () => {
  await queue?.close();
  await db?.drop();
});

interface PlanRow {
  table: string | null;
  type: string;
  key: string | null;
  Extra: string | null;
}

/** The plan's accesses to the jobs table, each a dive or a range of an index (never ALL, nor `index`: a full index scan). */
async function assertIndexed(name: string, sql: string, values: readonly unknown[] = []): Promise<void> {
  const plan = (await db.explain<PlanRow>(sql, values)).filter((row) => row.table === 'jobs');
  for (const row of plan) {
    assert.ok(row.key !== null, `${name}: reads the table without an index (${JSON.stringify(row)})`);
    assert.match(row.type, /^(range|ref|eq_ref|const)$/, `${name}: ${JSON.stringify(row)}`);
  }
}

test(`on ${JOBS.toLocaleString('en-US')} jobs, every monitoring read of the jobs table is an index dive or a range`, async () => {
  const [{ total }] = await db.rows<{ total: number }>('SELECT COUNT(*) AS total FROM jobs');
  assert.equal(Number(total), JOBS);
  await assertIndexed('the counts', statsSql.COUNT_JOBS_SQL(table, true), [KINDS, ...Array(6).fill('jobs'), 0]); // the fold mark at 0: a range of every job
  await assertIndexed('the longest wait and the highest id', statsSql.HEAD_AGE_AND_MAX_ID_SQL(table));
  await assertIndexed('the longest wait per kind', statsSql.OLDEST_WAITING_BY_KIND_SQL(table));
  await assertIndexed('the claimed jobs per owner', statsSql.CLAIMED_BY_OWNER_SQL(table));
  await assertIndexed('a page of failed jobs', failedSql.FAILED_PAGE_SQL(table), [50, 100]);
  await assertIndexed('a job, whole', jobSql.READ_JOB_SQL(table), [1000]);
});

test(`on ${JOBS.toLocaleString('en-US')} jobs, every search of the dashboard reads a page of one index in its order, never sorting the table's rows`, async () => {
  const searches: Array<[string, readonly [string, readonly unknown[]]]> = [
    ['by id', [searchSql.JOB_BY_ID_SQL(table), [1000]]],
    ['by key', [searchSql.JOBS_BY_KEY_SQL(table), ['k', 'k']]],
    ['the newest jobs', searchSql.jobsInRangeSql(table, {}, JOB_STATUSES, 50, 100)],
    ['by status', searchSql.jobsInRangeSql(table, { status: 'done' }, JOB_STATUSES, 50, 100)],
    ['by kind', searchSql.jobsInRangeSql(table, { kind: 'email' }, JOB_STATUSES, 50, 100)],
    ['by kind and status', searchSql.jobsInRangeSql(table, { kind: 'email', status: 'failed' }, JOB_STATUSES, 50, 100)],
    ['by kind and group', searchSql.jobsInRangeSql(table, { kind: 'email', group: 'acct-3' }, JOB_STATUSES, 50, 100)],
    ['by kind, group and status', searchSql.jobsInRangeSql(table, { kind: 'email', group: 'acct-3', status: 'done' }, JOB_STATUSES, 50, 100)],
  ];
  for (const [name, [sql, values]] of searches) {
    const plan = (await db.explain<PlanRow>(sql, values)).filter((row) => row.table === 'jobs' || row.table === 'j');
    assert.ok(plan.length > 0, `${name}: the plan reads the jobs table`);
    for (const row of plan) {
      assert.ok(row.key !== null && row.type !== 'ALL', `${name}: reads the table without an index (${JSON.stringify(row)})`);
      assert.doesNotMatch(row.Extra ?? '', /filesort/i, `${name}: sorts the table's rows (${JSON.stringify(row)})`);
    }
  }
  const page = await queue.findJobs({ kind: 'email', group: 'acct-3', limit: 20, offset: 40 });
  assert.equal(page.length, 20);
  assert.ok(page.every((job) => job.kind === 'email' && job.group === 'acct-3'));
});

test('after a recount of those jobs, stats() agrees with a full count', async () => {
  await queue.recount();
  const stats = await queue.stats();
  const full = await db.rows<{ kind: string; status: JobStatus; n: number }>('SELECT kind, status, COUNT(*) AS n FROM jobs GROUP BY kind, status');
  for (const kind of KINDS) {
    const entry = stats.byKind.find((each) => each.kind === kind)!;
    const of = (status: JobStatus) => full.filter((row) => row.kind === kind && row.status === status).reduce((sum, row) => sum + Number(row.n), 0);
    assert.deepEqual(entry.counts, Object.fromEntries(JOB_STATUSES.map((status) => [status, of(status)])), kind);
  }
});
