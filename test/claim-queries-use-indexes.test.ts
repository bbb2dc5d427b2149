import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { quoteIdentifier } from '../src/config/identifiers.js';
import * as claimSql from '../src/queue/sql/claim.js';
import * as completeSql from '../src/queue/sql/complete.js';
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
}

/** EXPLAIN with the placeholders filled by the driver, exactly as jobq sends them. */
const explain = (sql: string, values: readonly unknown[]) => db.rows<PlanRow>(`EXPLAIN ${sql}`, [...values]);
const tableRows = (plan: PlanRow[]) => plan.filter((row) => row.table === 'jobs' || row.table === 'j');

test('the oldest-first candidate query reads (status, run_after) ranges, never the table', async () => {
  const plan = tableRows(await explain(...claimSql.candidatesOldest(table, {}, { index: 3, count: 10 }, 100)));
  plan.push(...tableRows(await explain(...claimSql.candidatesStale(table, {}, 50_000, 100))));
  assert.equal(plan.length, 3);
  for (const row of plan) {
    assert.equal(row.key, 'status_run_after');
    assert.equal(row.type, 'range');
  }
});

test("the article's random-prefix candidate query reads a (status, d) range", async () => {
  const plan = tableRows(await explain(...claimSql.candidatesByPrefix(table, 'a%', { index: 3, count: 10 }, 100)));
  assert.deepEqual(plan.map((row) => [row.key, row.type]), [
    ['status_run_after', 'range'],
    ['status_d', 'range'],
    ['status_run_after', 'range'],
  ]);
});

test('claiming some kinds reads one range of the kind index per kind and part', async () => {
  for (const kinds of [['email'], ['email', 'report', 'sms']]) {
    const plan = tableRows(await explain(...claimSql.candidatesOldest(table, { kinds }, { index: 3, count: 10 }, 100)));
    plan.push(...tableRows(await explain(...claimSql.candidatesStale(table, { kinds }, 50_000, 100))));
    assert.deepEqual(plan.map((row) => [row.key, row.type]), Array(3 * kinds.length).fill(['kind_status_run_after', 'range']), kinds.join());
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
