import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimScope, kindsApart, noKindRules, withinKindRules } from '../../src/claim/kind-rules.js';
import * as claimSql from '../../src/claim/sql/claim.js';
import type { ClaimScope, Lane, TakenLane } from '../../src/claim/sql/claim.js';
import { randomPrefixRange } from '../../src/demo/demo-jobs.js';
import { quoteIdentifier } from '../../src/config/identifiers.js';

const JOBS = quoteIdentifier('jobs');

// The claim's statements as built for every scope and lane, with no server: each has as many
// placeholders as values (a value out of place would read the wrong jobs, not fail).

const scopes: ClaimScope[] = [{}, { kinds: ['email'] }, { kinds: ['email', 'sms'] }, { kinds: ['email'], withoutKind: true }, { kinds: [], withoutKind: true }];
const lanes: Array<Lane | TakenLane | undefined> = [undefined, { index: 1, count: 3 }, { index: 1, count: 3, partitions: 6 }, { taken: true, count: 3 }];

function assertPlaceholders([sql, values]: readonly [string, unknown[]], what: string): void {
  assert.equal(sql.split('?').length - 1, values.length, `${what}: ${sql}`);
}

test('candidate reads have a value for each placeholder, for every scope and lane', () => {
  for (const scope of scopes) {
    for (const lane of lanes) {
      const what = JSON.stringify({ scope, lane });
      assertPlaceholders(claimSql.candidatesOldest(JOBS, scope, lane, 100, 5), `oldest ${what}`);
      assertPlaceholders(claimSql.candidatesPreferred(JOBS, randomPrefixRange(), lane, 100), `preferred ${what}`);
    }
    assertPlaceholders(claimSql.candidatesAhead(JOBS, scope, 5, 20), `ahead ${JSON.stringify(scope)}`);
    assertPlaceholders(claimSql.candidatesLocked(JOBS, scope, 100), `locked ${JSON.stringify(scope)}`);
    assertPlaceholders(claimSql.candidatesStale(JOBS, scope, 50_000, 100), `stale ${JSON.stringify(scope)}`);
    assertPlaceholders(claimSql.hasPendingWork(JOBS, scope, false), `pending ${JSON.stringify(scope)}`);
  }
});

test('a lane of partitions names its partitions; a lane of ids filters on them; a taken lane reads @jobq_lane', () => {
  const [byPartition] = claimSql.candidatesOldest(JOBS, {}, { index: 1, count: 3, partitions: 6 }, 100);
  assert.match(byPartition, /PARTITION \(p1, p4\)/);
  const [byId, values] = claimSql.candidatesOldest(JOBS, {}, { index: 1, count: 3 }, 100);
  assert.match(byId, /MOD \? = \?/);
  assert.deepEqual(values.slice(0, 3), [100, 3, 1]);
  assert.match(claimSql.candidatesOldest(JOBS, {}, { taken: true, count: 3 }, 100)[0], /= @jobq_lane/);
});

test('paused, limited and grouped kinds narrow the scope; a claim whose own kinds are all paused reads nothing', () => {
  const rules = { queue: 'jobs', paused: ['email'], limited: ['pdf'], grouped: ['import'], tableLimited: false, present: ['email', 'sms', 'pdf', 'import'] };
  assert.deepEqual(claimScope({ batchSize: 1, kinds: ['email', 'report', 'pdf'] }, rules), { kinds: ['report'] });
  assert.equal(claimScope({ batchSize: 1, kinds: ['email'] }, rules), undefined);
  assert.deepEqual(claimScope({ batchSize: 1 }, rules), { kinds: ['sms'], withoutKind: true });
  assert.deepEqual(claimScope({ batchSize: 1 }, noKindRules('jobs')), {});
  // Limited and grouped kinds are claimed apart: a claim's own, or any for the whole queue; never a paused one.
  assert.deepEqual(kindsApart({ batchSize: 1, kinds: ['pdf', 'sms', 'import'] }, rules), ['pdf', 'import']);
  assert.deepEqual(kindsApart({ batchSize: 1, kinds: ['sms'] }, rules), []);
  assert.deepEqual(kindsApart({ batchSize: 1 }, { ...rules, paused: ['pdf'] }), ['import']);
  const jobs = [{ id: 1, kind: 'email' }, { id: 2, kind: 'sms' }, { id: 3, kind: null }, { id: 4, kind: 'pdf' }, { id: 5, kind: 'pdf' }, { id: 6, kind: 'import' }, { id: 7, kind: 'import' }];
  assert.deepEqual(withinKindRules(jobs, rules, new Set([5, 7])).map((job) => job.id), [2, 3, 5, 7], 'of a limited or grouped kind, only what its own read took');
});
