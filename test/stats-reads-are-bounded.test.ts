import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { quoteIdentifier } from '../src/config/identifiers.js';
import { JobQueue } from '../src/index.js';
import * as statsSql from '../src/queue/sql/stats.js';
import * as failedSql from '../src/queue/sql/failed-jobs.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

// The reads `stats()`, the dashboard and /metrics make read the entries of the jobs they are
// about: the counts those of claimed and delayed jobs (waiting, done and failed ones are kept count of),
// the longest waits a few per kind, group and priority, a page of failed jobs those up to the
// page's end. The server's own handler counters show how many entries each statement read.
// 128,000 jobs make the point (a scan reads them all) and fit the test server's buffer pool beside
// the other tests; the bench's monitoring scenario times the same reads on a million.

let db: TestDatabase;
const table = quoteIdentifier('jobs');
const KINDS = ['email', 'report', 'sms'];
const GROUPS = 4;
const PRIORITIES = [-1, 0, 5];

before(async () => {
  db = await createTestDatabase();
  const queue = await JobQueue.open(db.url);
  try {
    await queue.setup();
    // 1,000 jobs of every kind, group and priority, a few of them delayed, kindless ones too ...
    await queue.enqueueMany(
      Array.from({ length: 1000 }, (_, n) => ({
        ...(n % 10 !== 0 && { kind: KINDS[n % KINDS.length]!, ...(n % 3 === 0 && { group: `acct-${n % GROUPS}` }) }),
        priority: PRIORITIES[n % PRIORITIES.length]!,
        ...(n % 50 === 0 && { runAfter: new Date(Date.now() + 3_600_000) }),
      })),
    );
    // ... some of them claimed, about half of the rest done ...
    await queue.claim({ batchSize: 30, ownerId: 7, leaseSeconds: 600 });
  } finally {
    await queue.close();
  }
  await db.admin.query("UPDATE jobs SET status = 'done' WHERE status = 'unclaimed' AND id % 2 = 0");
  await db.admin.query("UPDATE jobs SET status = 'failed', last_error = 'boom' WHERE status = 'unclaimed' AND id % 7 = 1");
  // ... and doubled seven times: 128,000 rows.
  const columns = 'status, owner_id, owner_date, run_after, claim_token, kind, payload, priority, job_group';
  for (let i = 0; i < 7; i++) await db.admin.query(`INSERT INTO jobs (${columns}) SELECT ${columns} FROM jobs`);
  await db.admin.query('ANALYZE TABLE jobs');
});
after(async () => db?.drop());

/**
 * Index entries and table rows a statement read, by the session's handler counters (those of a
 * read of the counters themselves taken off), and its rows.
 */
async function entriesRead<T>(sql: string, values: unknown[] = []): Promise<{ read: number; rows: T[] }> {
  const counters = async () => {
    const [rows] = (await db.admin.query(
      "SHOW SESSION STATUS WHERE Variable_name IN ('Handler_read_key', 'Handler_read_next', 'Handler_read_prev', 'Handler_read_first', 'Handler_read_last', 'Handler_read_rnd', 'Handler_read_rnd_next')",
    )) as unknown as [Array<{ Value: string }>];
    return rows.reduce((sum, row) => sum + Number(row.Value), 0);
  };
  const first = await counters();
  const before = await counters();
  const [rows] = (await db.admin.query(sql, values)) as unknown as [T[]];
  return { read: (await counters()) - before - (before - first), rows };
}

const scanned = (sql: string) => db.rows<{ age_us: number | null }>(sql);

test('the counts read the index entries of claimed and delayed jobs, not those of waiting or done jobs, and agree with a full count', async () => {
  const { read, rows } = await entriesRead<{ scope: string; kind: string | null; status: string; count: number }>(statsSql.COUNT_JOBS_SQL(table, true), [
    KINDS,
    ...Array(6).fill('jobs'),
    Number.MAX_SAFE_INTEGER, // the fold mark: no job after it to count (a fold has counted them)
  ]);
  const full = await db.rows<{ kind: string | null; status: string; count: number }>(
    "SELECT kind, status, COUNT(*) AS count FROM jobs IGNORE INDEX (status_priority_run_after, kind_status_group_priority_run_after) WHERE status IN ('unclaimed', 'claimed', 'scheduled') GROUP BY kind, status",
  );
  const fullOf = (kind: string | null | undefined, status: string) =>
    full.filter((row) => (kind === undefined || row.kind === kind) && row.status === status).reduce((sum, row) => sum + Number(row.count), 0);
  const claimed = fullOf(undefined, 'claimed');
  const delayed = fullOf(undefined, 'scheduled');
  const waiting = fullOf(undefined, 'unclaimed');
  assert.ok(claimed > 3000 && delayed > 1000 && waiting > 40_000, `${claimed} claimed, ${delayed} delayed, ${waiting} waiting`);
  // A claimed job is read twice (the status index and the kind index); a delayed one is read in the
  // status index and by its row, for its kind.
  assert.ok(read < 2 * claimed + 2 * delayed + 100, `read ${read} index entries for ${claimed} claimed and ${delayed} delayed jobs beside ${waiting} waiting`);
  const of = (scope: string, kind: string | null) => rows.filter((row) => row.scope === scope && row.kind === kind).reduce((sum, row) => sum + Number(row.count), 0);
  assert.equal(of('all', null), claimed, 'claimed');
  for (const kind of KINDS) {
    assert.equal(of('kind', kind), fullOf(kind, 'claimed'), `${kind} claimed`);
    assert.equal(of('scheduled', kind), fullOf(kind, 'scheduled'), `${kind} scheduled`);
  }
  assert.equal(of('scheduled', null), fullOf(null, 'scheduled'), 'scheduled of no kind');
});

test('the longest wait reads one index entry or so per priority, and agrees with a full read', async () => {
  const { read, rows } = await entriesRead<{ age_us: number; max_id: number }>(statsSql.HEAD_AGE_AND_MAX_ID_SQL(table));
  assert.ok(read < 50, `read ${read} index entries`);
  const [full] = await scanned("SELECT TIMESTAMPDIFF(MICROSECOND, MIN(run_after), NOW(6)) AS age_us FROM jobs IGNORE INDEX (status_priority_run_after) WHERE status = 'unclaimed' AND run_after <= NOW(6)");
  assert.ok(Math.abs(Number(rows[0]!.age_us) - Number(full!.age_us)) < 1_000_000, `${rows[0]!.age_us} against ${full!.age_us} µs`);
  assert.ok(Number(rows[0]!.max_id) >= 128_000, 'the highest id');
});

test('the longest wait of each kind reads a few index entries per group and priority, and agrees with a full read', async () => {
  const { read, rows } = await entriesRead<{ kind: string; age_us: number }>(statsSql.OLDEST_WAITING_BY_KIND_SQL(table));
  const ranges = KINDS.length * (GROUPS + 1) * PRIORITIES.length;
  assert.ok(read < 10 * ranges, `read ${read} index entries for ${ranges} ranges`);
  const full = await db.rows<{ kind: string; age_us: number }>(
    "SELECT kind, TIMESTAMPDIFF(MICROSECOND, MIN(run_after), NOW(6)) AS age_us FROM jobs IGNORE INDEX (kind_status_group_priority_run_after) WHERE kind IS NOT NULL AND status = 'unclaimed' AND run_after <= NOW(6) GROUP BY kind ORDER BY kind",
  );
  assert.deepEqual(
    rows.map((row) => row.kind).sort(),
    full.map((row) => row.kind),
  );
  for (const { kind, age_us } of full) assert.ok(Math.abs(Number(rows.find((row) => row.kind === kind)!.age_us) - Number(age_us)) < 1_000_000, kind);
});

test('a page of failed jobs reads the entries up to its end, however many jobs failed', async () => {
  const [{ failed }] = (await db.rows<{ failed: number }>("SELECT COUNT(*) AS failed FROM jobs WHERE status = 'failed'")) as [{ failed: number }];
  assert.ok(Number(failed) > 5_000, `${failed} failed jobs`);
  const { read, rows } = await entriesRead<{ id: number }>(failedSql.FAILED_PAGE_SQL(table), [50, 100]);
  assert.equal(rows.length, 50);
  // The index entries up to the page's end, and the page's own rows by primary key.
  assert.ok(read < 2 * (100 + 50) + 10, `read ${read} index entries for a page of 50 after 100`);
});

test('the claimed jobs per owner read the claimed entries only', async () => {
  const { read, rows } = await entriesRead<{ count: number }>(statsSql.CLAIMED_BY_OWNER_SQL(table));
  const claimed = rows.reduce((sum, row) => sum + Number(row.count), 0);
  assert.equal(claimed, 30 * 128);
  // About two handler reads per claimed entry: bounded by the claimed jobs, whatever the table holds.
  assert.ok(read <= 2 * claimed + 10, `read ${read} index entries for ${claimed} claimed jobs`);
});
