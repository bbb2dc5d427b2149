import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULTS } from '../../src/config/defaults.js';
import { ExitCode, JobqError } from '../../src/errors.js';
import { resolveWorkerOptions } from '../../src/worker/options.js';

test('options left out take their defaults from DEFAULTS', () => {
  const { concurrency, batchSize, leaseSeconds, maxAttempts, retryDelayMs, keepDone, once } = DEFAULTS;
  assert.deepEqual(resolveWorkerOptions(), { concurrency, batchSize, leaseSeconds, maxAttempts, retryDelayMs, keepDone, once });
  assert.equal(resolveWorkerOptions({ batchSize: 7 }).batchSize, 7);
});

test('a bad value is one usage error naming the option, the range and the value', () => {
  const refused = (options: Parameters<typeof resolveWorkerOptions>[0], message: string) =>
    assert.throws(() => resolveWorkerOptions(options), (error: unknown) => error instanceof JobqError && error.exitCode === ExitCode.usage && error.message === message);
  refused({ concurrency: 0 }, 'concurrency must be a whole number from 1 to 10000, not 0');
  refused({ batchSize: 1001 }, 'batchSize must be a whole number from 1 to 1000, not 1001');
  refused({ batchSize: 2.5 }, 'batchSize must be a whole number from 1 to 1000, not 2.5');
  refused({ maxAttempts: 0 }, 'maxAttempts must be a whole number from 1 to 1000, not 0');
  refused({ retryDelayMs: -1 }, 'retryDelayMs must be a whole number from 0 to 3600000, not -1');
  refused({ leaseSeconds: 0.2 }, 'leaseSeconds must be a number of seconds from 1 to 86400, not 0.2');
  refused({ leaseSeconds: Number.NaN }, 'leaseSeconds must be a number of seconds from 1 to 86400, not null');
});
