import assert from 'node:assert/strict';
import { test } from 'node:test';
import { headBeforeLane, keepNoLessUrgentThanSkipped, laneLeastUrgent, orderCandidates } from '../../src/claim/candidate-order.js';
import { PART, type CandidateRow } from '../../src/claim/sql/claim.js';

// The claim's pure rules over its candidate rows, no server: what it tries to lock, whether the
// head of the queue is worth a read, and which locked jobs it keeps.

const expired = (id: number): CandidateRow => ({ id, part: PART.expired, priority: 0 });
const lane = (id: number, priority = 0): CandidateRow => ({ id, part: PART.lane, priority });
const ahead = (id: number, priority: number): CandidateRow => ({ id, part: PART.ahead, priority });

test('expired leases come first, whatever their priority; then the lane', () => {
  const order = orderCandidates([lane(5), expired(9), lane(6)], 10).map(({ id, priority }) => ({ id, priority }));
  assert.deepEqual(order, [
    { id: 9, priority: null },
    { id: 5, priority: 0 },
    { id: 6, priority: 0 },
  ]);
});

test('head jobs more urgent than the lane\'s least urgent join it, once each, in the order of priority; the others stay out', () => {
  const rows = [lane(10, 5), lane(11, 0), ahead(3, 1), ahead(4, 9), ahead(11, 0)];
  assert.deepEqual(orderCandidates(rows, 10).map((candidate) => candidate.id), [11, 3, 10]);
});

test('over the limit, the most urgent are taken, the oldest first among equals', () => {
  const rows = [lane(10, 5), lane(11, 0), lane(12, 5), ahead(3, 1)];
  assert.deepEqual(orderCandidates(rows, 3).map((candidate) => candidate.id), [11, 3, 10]);
  assert.deepEqual(orderCandidates([expired(20), expired(21), lane(1, -5)], 2).map((candidate) => candidate.id), [20, 21], 'expired leases before any waiting job');
});

test("the lane's least urgent priority, and when the head of the queue is worth reading up to it", () => {
  assert.equal(laneLeastUrgent([lane(1, 2), lane(2, 7), ahead(3, 9), expired(4)]), 7);
  assert.equal(laneLeastUrgent([ahead(3, 9)]), undefined, 'no lane rows');
  assert.equal(headBeforeLane([lane(1, 7), ahead(3, 2)], 7, 7), 7, 'the probe found a more urgent job');
  assert.equal(headBeforeLane([lane(1, 7)], 7, 3), 7, 'the probe looked below 3 only: jobs between 3 and 7 may wait elsewhere');
  assert.equal(headBeforeLane([lane(1, 7)], 7, 7), undefined, 'the probe covered the lane and found none');
  assert.equal(headBeforeLane([lane(1, 7)], 7, undefined), undefined, 'the probe did not look');
  assert.equal(headBeforeLane([], undefined, 0), undefined, 'an empty lane');
});

test('a claim keeps no locked job less urgent than a waiting candidate another claim got first', () => {
  const candidates = [{ id: 1, priority: 1 }, { id: 2, priority: 3 }, { id: 3, priority: 5 }, { id: 4, priority: null }];
  const locked = [{ id: 2, priority: 3 }, { id: 3, priority: 5 }, { id: 4, priority: 9 }];
  assert.deepEqual(keepNoLessUrgentThanSkipped(candidates, locked).map((job) => job.id), [], 'job 1 (priority 1) was skipped: nothing less urgent is kept');
  const evenly = [{ id: 1, priority: 0 }, { id: 2, priority: 0 }];
  assert.deepEqual(keepNoLessUrgentThanSkipped(evenly, [{ id: 2, priority: 0 }]).map((job) => job.id), [2], 'at one priority nothing is dropped');
  assert.deepEqual(keepNoLessUrgentThanSkipped(candidates, [...locked, { id: 1, priority: 1 }]).length, 4, 'none skipped, all kept');
});
