import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { quoteIdentifier } from '../src/config/identifiers.js';
import { JobQueue } from '../src/index.js';
import { randomPrefixRange } from '../src/demo/demo-jobs.js';
import * as claimSql from '../src/claim/sql/claim.js';
import * as completeSql from '../src/claim/sql/complete.js';
import * as groupSql from '../src/claim/sql/groups.js';
import * as pauseSql from '../src/claim/sql/pause.js';
import * as pruneSql from '../src/queue/sql/prune.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';
import { prefill } from './helpers/queue-fixtures.js';

let db: TestDatabase;
const table = quoteIdentifier('jobs');
before(async () => {
  db = await createTestDatabase();
  await prefill(db.url, 2000);
});
after(async () => db.drop());

interface PlanRow {
  table: string | null;
  type: string;
  key: string | null;
  rows: number;
  Extra: string | null;
}

const explain = (sql: string, values: readonly unknown[]) => db.explain<PlanRow>(sql, values);
const tableRows = (plan: PlanRow[]) => plan.filter((row) => row.table === 'jobs' || row.table === 'j');

/** A read that stops after its LIMIT: a range (or the one-value range `ref`) in index order, no filesort. */
const assertIndexOrderRead = (row: PlanRow, key: string) => {
  assert.equal(row.key, key);
  assert.match(row.type, /^(range|ref)$/, `${key}: ${row.type}`);
  assert.doesNotMatch(row.Extra ?? '', /filesort|temporary/, `${key}: ${row.Extra}`);
};

test('the oldest-first candidate query reads (status, priority, run_after) ranges in index order, never the table', async () => {
  const plan = tableRows(await explain(...claimSql.candidatesOldest(table, {}, { index: 3, count: 10 }, 100)));
  plan.push(...tableRows(await explain(...claimSql.candidatesStale(table, {}, 50_000, 100))));
  plan.push(...tableRows(await explain(...claimSql.candidatesAhead(table, {}, 5, 20))));
  assert.equal(plan.length, 5, 'expired leases, the lane, the head of the queue; the stale jobs; the head more urgent than the lane');
  for (const row of plan) {
    assertIndexOrderRead(row, 'status_priority_run_after');
    assert.match(row.Extra ?? '', /Using index/);
  }
});

test('a claim without a lane locks its candidates as it reads them: the same ranges in index order, never the table', async () => {
  const plan = tableRows(await explain(...claimSql.candidatesLocked(table, {}, 100)));
  assert.equal(plan.length, 2, 'expired leases, the waiting jobs');
  for (const row of plan) assertIndexOrderRead(row, 'status_priority_run_after');
  for (const kinds of [['email'], ['email', 'report', 'sms']]) {
    const byKind = tableRows(await explain(...claimSql.candidatesLocked(table, { kinds }, 100)));
    assert.equal(byKind.length, 2 * kinds.length, kinds.join());
    for (const row of byKind) assertIndexOrderRead(row, 'kind_status_group_priority_run_after');
  }
});

test("the article's random-prefix candidate query reads a (status, d) range", async () => {
  const plan = tableRows(await explain(...claimSql.candidatesPreferred(table, { ...randomPrefixRange(), values: ['a%'] }, { index: 3, count: 10 }, 100)));
  assert.deepEqual(plan.map((row) => row.key), ['status_priority_run_after', 'status_d', 'status_priority_run_after']);
  assert.equal(plan[1]!.type, 'range');
  for (const row of [plan[0]!, plan[2]!]) assertIndexOrderRead(row, 'status_priority_run_after');
});

test('claiming some kinds reads one range of the kind index per kind and part', async () => {
  for (const kinds of [['email'], ['email', 'report', 'sms']]) {
    const plan = tableRows(await explain(...claimSql.candidatesOldest(table, { kinds }, { index: 3, count: 10 }, 100)));
    plan.push(...tableRows(await explain(...claimSql.candidatesStale(table, { kinds }, 50_000, 100))));
    plan.push(...tableRows(await explain(...claimSql.candidatesAhead(table, { kinds }, 5, 20))));
    assert.equal(plan.length, 5 * kinds.length, kinds.join());
    for (const row of plan) assertIndexOrderRead(row, 'kind_status_group_priority_run_after');
  }
});

test('the locking select, the claim update and the delete touch rows by primary key only', async () => {
  const ids = [5, 17, 900];
  const lock = tableRows(await explain(claimSql.LOCK_CANDIDATES_SQL(table), [ids]));
  const claim = tableRows(await explain(claimSql.MARK_CLAIMED_SQL(table), [1, Buffer.alloc(16), 1000, ids]));
  const remove = tableRows(await explain(completeSql.DELETE_OWNED_SQL(table), [ids, Buffer.alloc(16)]));
  for (const [what, plan] of Object.entries({ lock, claim, remove })) {
    assert.equal(plan.length, 1, what);
    assert.equal(plan[0]!.key, 'PRIMARY', what);
    assert.equal(plan[0]!.type, 'range', what);
    assert.ok(plan[0]!.rows <= ids.length, `${what} reads only the named rows, not ${plan[0]!.rows}`);
  }
});

test('prune reads finished jobs as one range, oldest first, and deletes by primary key', async () => {
  const [read] = tableRows(await explain(pruneSql.ENDED_BEFORE_SQL(table), ['done', 86_400_000_000, 1000]));
  assertIndexOrderRead(read!, 'status_priority_run_after');
  assert.equal(read!.type, 'range');
  const [remove] = tableRows(await explain(pruneSql.DELETE_ENDED_SQL(table), [[5, 17, 900], 'done']));
  assert.deepEqual([remove!.key, remove!.type], ['PRIMARY', 'range']);
});

test("prune's delete of idle groups' lock rows looks each group up in the kind index, never reading the jobs table", async () => {
  const plan = await explain(groupSql.FORGET_IDLE_GROUP_LOCKS_SQL(table), ['jobs', 'mail', ['g1', 'g2']]);
  const [jobs] = tableRows(plan);
  assert.equal(jobs!.key, 'kind_status_group_priority_run_after', JSON.stringify(plan));
  assert.match(jobs!.type, /^(range|ref)$/, JSON.stringify(plan));
});

test('while kinds are paused, a claim of the whole queue reads kind by kind: the kinds present by a loose index scan, each kind and the jobs without one by index ranges', async () => {
  const queue = await JobQueue.open(db.url);
  await queue.enqueueMany(Array.from({ length: 3000 }, (_, n) => ({ kind: ['email', 'sms', 'report'][n % 3]! })));
  await queue.close();
  await db.admin.query(`ANALYZE TABLE \`${db.name}\`.jobs`);
  const [present] = tableRows(await explain(pauseSql.KINDS_PRESENT_SQL(table), []));
  assert.match(present!.Extra ?? '', /Using index for group-by/);
  const plan = tableRows(await explain(...claimSql.candidatesOldest(table, { kinds: ['email'], withoutKind: true }, { index: 1, count: 3 }, 100)));
  assert.equal(plan.length, 4, 'expired, lane and head of the kind; the jobs without a kind');
  for (const row of plan) assertIndexOrderRead(row, 'kind_status_group_priority_run_after');
});
