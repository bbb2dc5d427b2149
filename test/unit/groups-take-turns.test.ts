import assert from 'node:assert/strict';
import { test } from 'node:test';
import { takeInTurn } from '../../src/claim/candidate-order.js';
import { GroupRotation, sharePerGroup, shareRoundRobin, type GroupedCandidate } from '../../src/claim/fair-share.js';

// How a claim shares a kind between its groups, and a batch between the kinds it reads apart and
// the rest: pure logic, no server.

const jobs = (group: string | null, ...ids: number[]): GroupedCandidate[] => ids.map((id) => ({ id, priority: 0, group }));
const ids = (candidates: ReadonlyArray<{ id: number }>) => candidates.map((candidate) => candidate.id);

test('round-robin: one job of each group in turn, jobs without a group taking one turn a round; the rotation moves to the last group taken of', () => {
  const { candidates, rotateTo } = shareRoundRobin({
    expired: [],
    groups: [
      { group: 'big', room: Infinity, jobs: jobs('big', 1, 2, 3, 4) },
      { group: 'small', room: Infinity, jobs: jobs('small', 90, 91) },
    ],
    ungrouped: jobs(null, 50),
    take: 6,
  });
  assert.deepEqual(ids(candidates), [1, 90, 50, 2, 91, 3]);
  assert.equal(rotateTo, 'big');
});

test('round-robin within limits per group: expired leases first, each within its group; a group at its limit is passed over', () => {
  const { candidates, rotateTo } = shareRoundRobin({
    expired: [
      { id: 7, group: 'a' },
      { id: 8, group: 'full' },
    ],
    groups: [
      { group: 'a', room: 2, jobs: jobs('a', 10, 11, 12) },
      { group: 'full', room: 0, jobs: [] },
      { group: 'b', room: 1, jobs: jobs('b', 20, 21) },
    ],
    ungrouped: [],
    take: 10,
  });
  assert.deepEqual(ids(candidates), [7, 10, 20], 'a: the expired one and one more; full: none; b: one');
  assert.equal(candidates[0]!.priority, null, 'an expired lease goes first, whatever its priority');
  assert.equal(rotateTo, 'b');
});

test('every group at its limit: nothing taken, and the rotation moves past the groups read', () => {
  const { candidates, rotateTo } = shareRoundRobin({ expired: [], groups: [{ group: 'a', room: 0, jobs: [] }, { group: 'c', room: 0, jobs: [] }], ungrouped: [], take: 5 });
  assert.deepEqual(candidates, []);
  assert.equal(rotateTo, 'c');
  const rotation = new GroupRotation();
  assert.equal(rotation.of('import'), '');
  rotation.moveTo('import', 'c');
  assert.equal(rotation.of('import'), 'c');
  assert.equal(rotation.of('other'), '');
});

test('a read takes as many groups as jobs, two more and as many as the last found without room; once one came round, the groups it found and two more', () => {
  const rotation = new GroupRotation();
  assert.equal(rotation.groupsToRead('import', 19), 40, 'before any read: twice the jobs and two');
  rotation.sawHeld('import', 3);
  assert.equal(rotation.groupsToRead('import', 19), 24, 'three groups were full');
  assert.equal(rotation.groupsToRead('import', 2), 8, 'never fewer than 8');
  assert.equal(rotation.groupsToRead('import', 200), 50, 'never more than 50');
  rotation.sawGroups('import', 41, 0);
  assert.equal(rotation.groupsToRead('import', 19), 2, 'none waiting: two dives, room for new groups');
  rotation.sawGroups('import', 3, 2);
  assert.equal(rotation.groupsToRead('import', 19), 4);
  rotation.sawGroups('import', 5, 5);
  assert.equal(rotation.groupsToRead('import', 19), 24, 'it did not come round: there may be more');
  assert.equal(rotation.groupsToRead('other', 19), 40);
});

test('the groups a read found past the one the rotation moves to begin the next read; none past the last, none of another read', () => {
  const rotation = new GroupRotation();
  const read = ['a', 'b', 'c', 'd'].map((group) => ({ group, locks: group !== 'c' }));
  rotation.moveTo('import', 'b', read);
  assert.deepEqual(rotation.seenAhead('import', 10), read.slice(2), 'c and d, with whether each has a lock row');
  assert.deepEqual(rotation.seenAhead('import', 1), read.slice(2, 3), 'no more than the next read reads');
  assert.deepEqual(rotation.seenAhead('other', 10), []);
  rotation.moveTo('import', 'd', read);
  assert.deepEqual(rotation.seenAhead('import', 10), [], 'the rotation moved to the last group read: the next read dives');
  rotation.moveTo('import', 'a', read);
  rotation.moveTo('import', 'x', read);
  assert.deepEqual(rotation.seenAhead('import', 10), [], 'a group not among those read (an expired lease\'s): the next read dives');
  rotation.moveTo('import', 'a', read);
  rotation.moveTo('import', 'c');
  assert.deepEqual(rotation.seenAhead('import', 10), [], 'moved without a read');
});

test('an even share per group, rounded up; none without groups', () => {
  assert.equal(sharePerGroup(20, 3), 7);
  assert.equal(sharePerGroup(20, 40), 1);
  assert.equal(sharePerGroup(20, 0), 0);
});

test('a batch taken in turn from each kind read apart and the rest, each id once', () => {
  const c = (...list: number[]) => list.map((id) => ({ id, priority: 0 }));
  assert.deepEqual(ids(takeInTurn([c(1, 2, 3, 4), c(10, 11)], 5)), [1, 10, 2, 11, 3]);
  assert.deepEqual(ids(takeInTurn([c(1, 2), c(2, 3, 1, 4)], 10)), [1, 2, 3, 4]);
  assert.deepEqual(ids(takeInTurn([[], c(5, 6, 7)], 2)), [5, 6]);
  assert.deepEqual(ids(takeInTurn([c(5, 6, 7), []], 2)), [5, 6]);
  assert.deepEqual(ids(takeInTurn([c(1), c(20, 21, 22), c(30, 31)], 6)), [1, 20, 30, 21, 31, 22], 'three kinds: one of each in turn');
});
