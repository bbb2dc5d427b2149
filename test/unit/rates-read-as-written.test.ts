import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRate, formatRate, parseRate } from '../../src/config/rate.js';

// Rates as the command line and the dashboard write them, and as the library takes them: no server.

test('N/DURATION reads as jobs per whole seconds, and writes back the same way', () => {
  assert.deepEqual(parseRate('100/1s'), { jobs: 100, perSeconds: 1 });
  assert.deepEqual(parseRate(' 20/10s '), { jobs: 20, perSeconds: 10 });
  assert.deepEqual(parseRate('10/1m'), { jobs: 10, perSeconds: 60 });
  assert.deepEqual(parseRate('1000/1h'), { jobs: 1000, perSeconds: 3600 });
  assert.deepEqual(parseRate('5/90'), { jobs: 5, perSeconds: 90 });
  for (const rate of [{ jobs: 100, perSeconds: 1 }, { jobs: 10, perSeconds: 60 }, { jobs: 1000, perSeconds: 3600 }, { jobs: 5, perSeconds: 90 }]) {
    assert.deepEqual(parseRate(formatRate(rate)), rate);
  }
  assert.equal(formatRate({ jobs: 5, perSeconds: 90 }), '5/90s');
  assert.equal(formatRate({ jobs: 1, perSeconds: 86_400 }), '1/24h');
});

test('anything else is no rate: a missing window, zero, fractions, too long a window', () => {
  for (const text of ['100', '0/1s', '5/0.5s', '5/fortnight', '-1/1s', '1.5/1s', '5/2d', '2000000/1s', '/1s']) assert.equal(parseRate(text), undefined, text);
  assert.throws(() => checkRate({ jobs: 10 }, 'rate'), /^JobqError: rate must be \{ jobs, perSeconds \}/);
  assert.throws(() => checkRate({ jobs: 10, perSeconds: 0.5 }, 'groupRate'), /^JobqError: groupRate must be/);
  assert.deepEqual(checkRate({ jobs: 10, perSeconds: 60 }, 'rate'), { jobs: 10, perSeconds: 60 });
});
