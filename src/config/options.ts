import { ExitCode, JobqError } from '../errors.js';
import { ARTICLE, DEFAULTS, MAX_BATCH_SIZE } from './defaults.js';

/**
 * A numeric option, declared once: its name in the library, its flag and help text on the
 * command line, its range and its default. The commands build their flags from it (src/cli/
 * options.ts, optionFor), and the library's doors (`queue.work`, `claim()`) check a value with
 * the same rule (checkNumber), so a value refused in one place is refused everywhere.
 */
export interface NumberOption {
  name: string;
  /** The flag with its value, as commander takes it: `-b, --batch-size <n>`. */
  flags: string;
  help: string;
  min: number;
  max: number;
  /** Whole numbers only. */
  integer: boolean;
  /** Says what the number counts in the error: `a number of seconds`. */
  unit?: 'seconds';
  default?: number;
}

const declare = <T extends Record<string, NumberOption>>(options: T) => options;

/** The options of the claim and the worker: `queue.work`, `claim()`, `jobq work`, `start-processing`. */
export const OPTIONS = declare({
  concurrency: { name: 'concurrency', flags: '--concurrency <n>', help: 'handlers running at once in each process', min: 1, max: 10_000, integer: true, default: DEFAULTS.concurrency },
  batchSize: { name: 'batchSize', flags: '-b, --batch-size <n>', help: 'most jobs one claim takes', min: 1, max: MAX_BATCH_SIZE, integer: true, default: DEFAULTS.batchSize },
  leaseSeconds: {
    name: 'leaseSeconds',
    flags: '--lease <seconds>',
    help: 'a claim holds its jobs this long (renewed while they wait and run)',
    // At least a second: leases are renewed every third of their length, and a shorter one runs
    // out between two turns of a busy loop.
    min: 1,
    max: 86_400,
    integer: false,
    unit: 'seconds',
    default: DEFAULTS.leaseSeconds,
  },
  maxAttempts: { name: 'maxAttempts', flags: '--max-attempts <n>', help: 'handler failures per job before it goes to failed', min: 1, max: 1000, integer: true, default: DEFAULTS.maxAttempts },
  maxSnoozes: { name: 'maxSnoozes', flags: '--max-snoozes <n>', help: 'times a handler may put its job off (job.snooze) before it goes to failed', min: 0, max: 32_767, integer: true, default: DEFAULTS.maxSnoozes },
  pollIntervalMs: { name: 'pollIntervalMs', flags: '--poll-interval-ms <ms>', help: 'the longest an idle worker waits before it looks at an empty queue again', min: 1, max: 60_000, integer: true, default: DEFAULTS.pollIntervalMs },
  lightClaimPauseMs: {
    name: 'lightClaimPauseMs',
    flags: '--light-claim-pause-ms <ms>',
    help: 'after a claim that took only a few jobs, wait this long before the next, gathering jobs that arrive one at a time (0: claim again at once: jobs start sooner, the server works harder)',
    min: 0,
    max: 1000,
    integer: true,
    default: DEFAULTS.lightClaimPauseMs,
  },
  retryDelayMs: { name: 'retryDelayMs', flags: '--retry-delay-ms <ms>', help: 'wait before the first retry of a failed job; doubles per attempt', min: 0, max: 3_600_000, integer: true, default: DEFAULTS.retryDelayMs },
  timeoutMs: {
    name: 'timeoutMs',
    flags: '--timeout <[kind=]duration...>',
    help: 'a handler may run this long (500ms, 30s, 5m), for every kind or for the kind named; then its job.signal fires and the run fails',
    // setTimeout's longest delay: about 24.8 days.
    min: 1,
    max: 2_147_483_647,
    integer: true,
  },
  processes: { name: 'processes', flags: '-p, --processes <n>', help: 'worker processes (1: this process, no children)', min: 1, max: 64, integer: true, default: DEFAULTS.processes },
  replicaMaxLagSeconds: {
    name: 'replicaMaxLagSeconds',
    flags: '--replica-max-lag <seconds>',
    help: 'read candidates on the primary while the replica is further behind than this, or down',
    min: 0.001,
    max: 86_400,
    integer: false,
    unit: 'seconds',
    default: DEFAULTS.replicaMaxLagSeconds,
  },
});

/** The options of the article's program, `start-processing`: its generators and consumers. */
export const ARTICLE_OPTIONS = declare({
  generators: { name: 'generators', flags: '-g, --generators <n>', help: 'generator processes (0: consume only)', min: 0, max: 64, integer: true, default: ARTICLE.generators },
  consumers: { name: 'consumers', flags: '-c, --consumers <n>', help: 'consumer processes (0: generate only)', min: 0, max: 64, integer: true, default: ARTICLE.consumers },
  batchSize: { ...OPTIONS.batchSize, help: 'most jobs one claim may take', default: ARTICLE.batchSize },
  commitEvery: { name: 'commitEvery', flags: '--commit-every <n>', help: 'a generator commits after every N inserts', min: 1, max: 1000, integer: true, default: ARTICLE.commitEvery },
  workMs: { name: 'workMs', flags: '--work-ms <ms>', help: 'simulated processing time per claimed batch', min: 0, max: 3_600_000, integer: true, default: ARTICLE.workMs },
  leaseSeconds: { ...OPTIONS.leaseSeconds, help: 'a claim holds its jobs this long; then they may be claimed again' },
});

/** The limits on a kind: `queue.setLimit`, `jobq limit set`. */
export const LIMIT_OPTIONS = declare({
  concurrency: { name: 'concurrency', flags: '--concurrency <n>', help: 'most jobs of the kind running at once, across every worker', min: 1, max: 1_000_000, integer: true },
  groupConcurrency: { name: 'groupConcurrency', flags: '--group-concurrency <n>', help: 'most jobs of each group of the kind running at once', min: 1, max: 1_000_000, integer: true },
});

/** The rule of a number: its range, whether whole, its unit. */
export type NumberRange = Pick<NumberOption, 'min' | 'max' | 'integer' | 'unit'>;

/** What a value must be, for errors: `a whole number from 1 to 1000`. */
export function describeRange(option: NumberRange): string {
  const what = option.integer ? 'a whole number' : option.unit === 'seconds' ? 'a number of seconds' : 'a number';
  return `${what} from ${option.min} to ${option.max}`;
}

/** Whether a value is one the option takes. */
export function inRange(option: NumberRange, value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && (!option.integer || Number.isInteger(value)) && value >= option.min && value <= option.max;
}

/** The value, or its default when left out; a one-line usage error naming the option when it is out of range. */
export function checkNumber(option: NumberOption, value: unknown): number {
  const given = value ?? option.default;
  if (!inRange(option, given)) throw new JobqError(`${option.name} must be ${describeRange(option)}, not ${JSON.stringify(given)}`, ExitCode.usage);
  return given;
}
