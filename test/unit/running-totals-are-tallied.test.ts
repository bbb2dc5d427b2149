import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TotalsTally } from '../../src/claim/running-totals.js';
import { completion, failure, handBack } from '../../src/claim/pending-writes.js';
import type { Claim, ClaimedJob } from '../../src/claim/types.js';
import { quoteIdentifier } from '../../src/config/identifiers.js';

const JOBS = quoteIdentifier('jobs');

// What a claim loop adds to the running totals, from its settle statements, with no server.

const job = (id: number, kind: string | null, attempts = 1): ClaimedJob => ({ id, kind, payload: null, attempts, leaseExpiries: 0, priority: 0, snoozes: 0, timeoutMs: null, traceContext: null, group: null, cancelRequested: false });
const claim: Claim = { token: Buffer.alloc(16), jobs: [job(1, 'email'), job(2, 'email'), job(3, 'report', 3), job(4, null)], candidates: 4, failedIds: [] };

/** The values of the tally's statement, as [kind, lane, completed, failed, retried, claims, empty claims] rows. */
const rows = (tally: TotalsTally, lane: number) => {
  const [[, values]] = tally.statement('jobs', lane) as [[string, unknown[]]];
  return Array.from({ length: values.length / 8 }, (_, i) => values.slice(i * 8 + 1, i * 8 + 8));
};

test('completions, failures and retries count per kind; releases count nothing; claims count under no kind', () => {
  const policy = { maxAttempts: 3, retryDelayMs: 1000 };
  const tally = new TotalsTally()
    .addSettles([...completion(JOBS, claim, [1, 2, 4], false), ...failure(JOBS, claim, [3], new Error('boom'), policy), ...handBack(JOBS, claim, [1])])
    .addClaim('claimed')
    .addClaim('empty')
    .addClaim('none');
  assert.deepEqual(rows(tally, 2), [
    ['email', 2, 2, 0, 0, 0, 0],
    ['', 2, 1, 0, 0, 2, 1],
    ['report', 2, 0, 1, 0, 0, 0],
  ]);
});

test('a copy takes a turn’s counts without touching the tally (a transaction may run twice); an empty tally adds nothing', () => {
  const tally = new TotalsTally().addClaim('claimed');
  const turn = tally.copy().addClaim('claimed');
  assert.equal(rows(turn, 0)[0]![5], 2);
  assert.equal(rows(tally, 0)[0]![5], 1);
  tally.clear();
  assert.equal(tally.empty, true);
  assert.deepEqual(tally.statement('jobs', 0), []);
});

test('settles that move jobs into a kept count (waiting, done or failed) are one statement per kind and outcome; completions that delete, one in all', () => {
  const policy = { maxAttempts: 3, retryDelayMs: 1000 };
  const mixed: Claim = { ...claim, jobs: [...claim.jobs, job(5, 'report', 3), job(6, 'email', 3)] };
  const parts = (writes: ReturnType<typeof completion>) => writes.map((write) => [write.ids, write.keeps === undefined ? null : `${write.keeps.count}:${write.keeps.kind}`]);
  assert.deepEqual(parts(completion(JOBS, mixed, [1, 3, 2, 4], false)), [[[1, 3, 2, 4], null]]);
  assert.deepEqual(parts(completion(JOBS, mixed, [1, 3, 2, 4], true)), [
    [[1, 2], 'done_jobs:email'],
    [[3], 'done_jobs:report'],
    [[4], 'done_jobs:null'],
  ]);
  // 3, 5 and 6 have used their 3 attempts: they fail for good; 1, 2 and 4 are retried, waiting again.
  assert.deepEqual(parts(failure(JOBS, mixed, [1, 3, 4, 5, 6, 2], new Error('boom'), policy)), [
    [[1, 2], 'waiting_jobs:email'],
    [[3, 5], 'failed_jobs:report'],
    [[4], 'waiting_jobs:null'],
    [[6], 'failed_jobs:email'],
  ]);
  assert.deepEqual(parts(handBack(JOBS, mixed, [4, 1, 3])), [
    [[4], 'waiting_jobs:null'],
    [[1], 'waiting_jobs:email'],
    [[3], 'waiting_jobs:report'],
  ]);
});
