import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_DATABASE_URL, DATABASE_URL_ENV } from '../config/database-url.js';
import { DEFAULT_TABLE } from '../config/defaults.js';
import { describeRange, inRange, OPTIONS, type NumberOption, type NumberRange } from '../config/options.js';
import { parseRate, RATE_FORMAT, type Rate } from '../config/rate.js';
import { parseDuration } from '../config/duration.js';
import { EVERY_KIND } from '../claim/sql/limits.js';
import { checkKind } from '../queue/new-jobs.js';

/** A commander parser for a number in [min, max]; `integer` refuses fractions. */
export function numberIn(min: number, max: number, integer = true): (value: string) => number {
  return parserFor({ min, max, integer });
}

/** A commander parser for a rate, `N/DURATION`. */
export function rateArgument(value: string): Rate {
  const rate = parseRate(value);
  if (rate === undefined) throw new InvalidArgumentError(`expected ${RATE_FORMAT}, got ${JSON.stringify(value)}.`);
  return rate;
}

/**
 * A commander collector for `--timeout`: `30s` for every kind, `email=2m` for one, into
 * `queue.work`'s `timeoutMs` per kind (`*`: every kind not named).
 */
export function timeoutArgument(value: string, previous: Record<string, number> = {}): Record<string, number> {
  const at = value.lastIndexOf('=');
  const kind = at < 0 ? EVERY_KIND : value.slice(0, at);
  const fail = (what: string) => new InvalidArgumentError(`expected [kind=]duration, like 30s, 500ms or email=2m, with ${what}, got ${JSON.stringify(value)}.`);
  let ms: number;
  try {
    ms = Math.round(parseDuration(value.slice(at + 1), 'the timeout') * 1000);
    if (kind !== EVERY_KIND) checkKind(kind);
  } catch {
    throw fail(`a kind of 1-64 characters and a duration (ms, s, m, h, d)`);
  }
  if (!inRange(OPTIONS.timeoutMs, ms)) throw fail(`a duration from 1ms to ${OPTIONS.timeoutMs.max / 86_400_000 | 0} days`);
  return { ...previous, [kind]: ms };
}

/** A commander parser that takes what the rule takes. */
function parserFor(option: NumberRange): (value: string) => number {
  return (value: string) => {
    const n = value.trim() === '' ? Number.NaN : Number(value);
    if (!inRange(option, n)) throw new InvalidArgumentError(`expected ${describeRange(option)}, got ${JSON.stringify(value)}.`);
    return n;
  };
}

/** The flag of a declared option (src/config/options.ts), with its parser, range and default. */
export function optionFor(option: NumberOption): Option {
  const flag = new Option(option.flags, option.help).argParser(parserFor(option));
  return option.default === undefined ? flag : flag.default(option.default);
}

export const parseId = numberIn(1, Number.MAX_SAFE_INTEGER);

/** A commander collector for job ids: `--ids 1041 1042`, or the flag given more than once. */
export const idList = (value: string, previous: number[] = []): number[] => [...previous, parseId(value)];

/** Options every command that talks to the database takes; the replica ones only commands that claim. */
export interface ConnectionOptions {
  databaseUrl?: string;
  table: string;
  replicaUrl?: string;
  replicaMaxLag?: number;
}

/** For the commands that claim: a replica to read candidates from. */
export function addReplicaOptions(command: Command): Command {
  return command
    .addOption(new Option('--replica-url <url>', 'a replica of the server to read claim candidates from (same database); locking and claiming stay on the primary'))
    .addOption(optionFor(OPTIONS.replicaMaxLagSeconds));
}

/** The replica settings for JobQueue.open and the worker processes, when a replica was named. */
export function replicaOf(options: ConnectionOptions): { url: string; maxLagSeconds: number } | undefined {
  return options.replicaUrl === undefined ? undefined : { url: options.replicaUrl, maxLagSeconds: options.replicaMaxLag ?? OPTIONS.replicaMaxLagSeconds.default };
}

export function addConnectionOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--database-url <url>', `server and database, e.g. ${DEFAULT_DATABASE_URL} (default: $${DATABASE_URL_ENV}, then .env, then ${DEFAULT_DATABASE_URL})`),
    )
    .addOption(new Option('--table <name>', 'jobs table: letters, digits and _ only').default(DEFAULT_TABLE));
}
