import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IdleBackoff } from '../../src/claim/idle-backoff.js';

test('an empty queue is polled at 2, 4, 8, 16 and then every 20 ms; a claim that finds work starts over', () => {
  const idle = new IdleBackoff();
  assert.deepEqual([1, 2, 3, 4, 5, 6].map(() => idle.next('empty')), [2, 4, 8, 16, 20, 20]);
  idle.reset();
  assert.equal(idle.next('empty'), 2);
});

test('pollIntervalMs sets the longest wait on an empty queue: 1000 is reached after 2, 4 ... 512; 1 polls every millisecond', () => {
  const slow = new IdleBackoff(1000);
  assert.deepEqual(Array.from({ length: 11 }, () => slow.next('empty')), [2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]);
  const fast = new IdleBackoff(1);
  assert.deepEqual([1, 2, 3].map(() => fast.next('empty')), [1, 1, 1]);
  slow.reset();
  assert.equal(slow.next('at-limit'), 50, 'a limit keeps its own waits');
});

test('work held back by a full concurrency limit is looked at after 50, 100, 200 and then every 400 ms', () => {
  const idle = new IdleBackoff();
  assert.deepEqual([1, 2, 3, 4, 5].map(() => idle.next('at-limit')), [50, 100, 200, 400, 400]);
});

test('contended candidates are tried again at once, a busy limit row after 2 ms; a claim that filled a limit waits 400 ms for its own jobs to end', () => {
  const idle = new IdleBackoff();
  for (let i = 0; i < 5; i++) idle.next('empty');
  assert.equal(idle.next('contended'), 0);
  assert.equal(idle.next('busy'), 2);
  idle.reset();
  assert.equal(idle.next('filled'), 400);
});

test('a loop held at a limit that finds the limit row busy keeps its waits at the limit, until a job of its own ends', () => {
  const idle = new IdleBackoff();
  assert.deepEqual([idle.next('at-limit'), idle.next('busy'), idle.next('busy'), idle.next('at-limit'), idle.next('busy')], [50, 100, 200, 400, 400]);
  idle.freed();
  assert.equal(idle.next('busy'), 2, 'its own job ended and was settled: the slot it freed is worth a prompt look');
  assert.equal(idle.next('at-limit'), 400);
  idle.next('empty');
  assert.equal(idle.next('busy'), 2, 'the queue had nothing for it: the limit did not hold it');
  idle.reset();
  idle.next('at-limit');
  idle.reset();
  assert.equal(idle.next('busy'), 2, 'a claim that took jobs starts over');
});
