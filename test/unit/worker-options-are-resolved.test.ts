import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULTS } from '../../src/config/defaults.js';
import { ExitCode, JobqError } from '../../src/errors.js';
import { resolveWorkerOptions } from '../../src/worker/options.js';
import { timeoutFor } from '../../src/worker/job-timeout.js';
import { timeoutArgument } from '../../src/cli/options.js';
import { InvalidArgumentError } from 'commander';

test('options left out take their defaults from DEFAULTS', () => {
  const { concurrency, batchSize, leaseSeconds, maxAttempts, maxSnoozes, retryDelayMs, keepDone, keepResults, once, pollIntervalMs, lightClaimPauseMs } = DEFAULTS;
  assert.deepEqual(resolveWorkerOptions(), { concurrency, batchSize, leaseSeconds, maxAttempts, maxSnoozes, retryDelayMs, keepDone, keepResults, once, pollIntervalMs, lightClaimPauseMs, timeoutMs: {} });
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
  refused({ pollIntervalMs: 0 }, 'pollIntervalMs must be a whole number from 1 to 60000, not 0');
  refused({ lightClaimPauseMs: -1 }, 'lightClaimPauseMs must be a whole number from 0 to 1000, not -1');
  assert.equal(resolveWorkerOptions({ lightClaimPauseMs: 0 }).lightClaimPauseMs, 0, '0: claim again at once');
  refused({ leaseSeconds: 0.2 }, 'leaseSeconds must be a number of seconds from 1 to 86400, not 0.2');
  refused({ leaseSeconds: Number.NaN }, 'leaseSeconds must be a number of seconds from 1 to 86400, not null');
  refused({ timeoutMs: 0 }, 'timeoutMs must be a whole number from 1 to 2147483647, not 0');
  refused({ timeoutMs: { email: 2.5 } }, 'timeoutMs of "email" must be a whole number from 1 to 2147483647, not 2.5');
  refused({ timeoutMs: { '': 100 } }, 'timeoutMs: kind must be a string of 1-64 characters, not ""');
});

test('timeoutMs: one number for every kind, or per kind with * for the others', () => {
  assert.deepEqual(resolveWorkerOptions({ timeoutMs: 500 }).timeoutMs, { '*': 500 });
  const perKind = resolveWorkerOptions({ timeoutMs: { email: 100, '*': 900 } }).timeoutMs;
  const of = (kind: string | null, timeoutMs: number | null = null) => ({ kind, timeoutMs });
  assert.deepEqual([timeoutFor(perKind, of('email')), timeoutFor(perKind, of('report')), timeoutFor(perKind, of(null)), timeoutFor(perKind, of('constructor'))], [100, 900, 900, 900]);
  assert.equal(timeoutFor(perKind, of('email', 5)), 5, "the job's own first");
  const emailOnly = resolveWorkerOptions({ timeoutMs: { email: 100 } }).timeoutMs;
  assert.deepEqual([timeoutFor(emailOnly, of('email')), timeoutFor(emailOnly, of('report')), timeoutFor(emailOnly, of(null))], [100, undefined, undefined]);
});

test('--timeout reads [kind=]duration, each kind once more overriding', () => {
  const read = (...values: string[]) => values.reduce<Record<string, number>>((previous, value) => timeoutArgument(value, previous), {});
  assert.deepEqual(read('30s'), { '*': 30_000 });
  assert.deepEqual(read('500ms', 'report=2m', 'a=b=1.5s'), { '*': 500, report: 120_000, 'a=b': 1500 });
  for (const bad of ['0', '0.0001s', 'soon', '=5s', 'email=', '30 days', `${'k'.repeat(65)}=1s`]) {
    assert.throws(() => read(bad), (error: unknown) => error instanceof InvalidArgumentError && /^expected \[kind=\]duration, like 30s, 500ms or email=2m/.test(error.message), bad);
  }
});
