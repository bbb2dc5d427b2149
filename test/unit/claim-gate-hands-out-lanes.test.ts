import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClaimGate } from '../../src/claim/claim-gate.js';
import type { Lane } from '../../src/claim/types.js';

/** Asks for a turn; the lane arrives when granted. */
function ask(gate: ClaimGate, holder: string, granted: Map<string, number>): void {
  gate.acquire(holder, (lane: Lane) => {
    assert.equal(lane.count, gate.lanes);
    granted.set(holder, lane.index);
  });
}

/** A gate of `turns` turns (and `lanes` lanes) that `holders` have asked, in this order, for a turn. */
function gateAskedBy(turns: number, holders: string[], lanes = turns, now?: () => number): { gate: ClaimGate; granted: Map<string, number> } {
  const gate = new ClaimGate(turns, lanes, now);
  const granted = new Map<string, number>();
  for (const holder of holders) ask(gate, holder, granted);
  return { gate, granted };
}

test('turns never share a lane, and no more run at once than there are lanes', () => {
  const { gate, granted } = gateAskedBy(3, Array.from({ length: 10 }, (_, i) => `consumer ${i}`));
  for (let round = 0; round < 500; round++) {
    const lanes = [...granted.values()];
    assert.equal(lanes.length, 3, 'all lanes in use while consumers wait');
    assert.equal(new Set(lanes).size, lanes.length, `two turns hold the same lane: ${lanes}`);
    const holder = [...granted.keys()][round % 3]!;
    granted.delete(holder);
    gate.release(holder);
    ask(gate, holder, granted);
  }
});

test('more lanes than turns (one per partition): still 3 turns at once, never on one lane, every lane granted in turn', () => {
  const gate = new ClaimGate(3, 8);
  const holding = new Map<string, number>();
  const grants: number[] = [];
  const ask = (holder: string) =>
    gate.acquire(holder, (lane) => {
      assert.ok(![...holding.values()].includes(lane.index), `lane ${lane.index} granted twice`);
      assert.equal(lane.count, 8);
      holding.set(holder, lane.index);
      grants.push(lane.index);
    });
  for (let i = 0; i < 10; i++) ask(`consumer ${i}`);
  for (let round = 0; round < 800; round++) {
    assert.equal(holding.size, 3, 'three turns in flight while consumers wait');
    // Turns of equal length: the oldest ends first.
    const holder = [...holding.keys()][0]!;
    holding.delete(holder);
    gate.release(holder);
    ask(holder);
  }
  const counts = [0, 1, 2, 3, 4, 5, 6, 7].map((lane) => grants.filter((g) => g === lane).length);
  assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `each lane granted as often: ${counts}`);
});

test('the latest waiter goes first, unless someone has waited over a second', () => {
  let clock = 0;
  const { gate, granted } = gateAskedBy(1, ['a', 'b', 'c'], 1, () => clock);
  gate.release('a');
  assert.deepEqual([...granted.keys()], ['a', 'c'], 'c asked last and goes before b');
  clock += 1001;
  ask(gate, 'd', granted);
  gate.release('c');
  assert.ok(granted.has('b'), 'b waited over a second and goes before d');
  assert.ok(!granted.has('d'));
});

test('a holder that dies frees its lane for the next', () => {
  const { gate, granted } = gateAskedBy(2, ['a', 'b', 'c']);
  gate.releaseAll('a');
  assert.equal(granted.get('c'), granted.get('a'));
});
