import { ExitCode, JobqError } from '../errors.js';
import { parseDuration } from './duration.js';

/** A rate limit: at most `jobs` jobs claimed in any window of `perSeconds` seconds. */
export interface Rate {
  jobs: number;
  perSeconds: number;
}

const JOBS = { min: 1, max: 1_000_000 };
const SECONDS = { min: 1, max: 86_400 };

const whole = (n: unknown, range: { min: number; max: number }) => typeof n === 'number' && Number.isInteger(n) && n >= range.min && n <= range.max;

/** What a rate on the command line must be, for its error. */
export const RATE_FORMAT = `a number of jobs per length of time like 100/1s, 20/10s or 1000/1h (${JOBS.min} to ${JOBS.max} jobs, per 1s to 1d in whole seconds)`;

/** A rate as given to the library: `{ jobs, perSeconds }`, whole numbers. Throws one line naming `what` otherwise. */
export function checkRate(value: unknown, what: string): Rate {
  const { jobs, perSeconds } = (typeof value === 'object' && value !== null ? value : {}) as Partial<Rate>;
  if (!whole(jobs, JOBS) || !whole(perSeconds, SECONDS)) {
    throw new JobqError(
      `${what} must be { jobs, perSeconds } with jobs a whole number from ${JOBS.min} to ${JOBS.max} and perSeconds from ${SECONDS.min} to ${SECONDS.max}, not ${JSON.stringify(value)}`,
      ExitCode.usage,
    );
  }
  return { jobs: jobs!, perSeconds: perSeconds! };
}

/** A rate as written on the command line: `N/DURATION` (`100/1s`, `20/10s`, `1000/1h`); undefined when it is not one (see RATE_FORMAT). */
export function parseRate(text: string): Rate | undefined {
  const match = /^(\d+)\/(.+)$/.exec(text.trim());
  if (match === null) return undefined;
  const rate = { jobs: Number(match[1]), perSeconds: tryDuration(match[2]!) };
  return whole(rate.jobs, JOBS) && whole(rate.perSeconds, SECONDS) ? rate : undefined;
}

function tryDuration(text: string): number {
  try {
    return parseDuration(text, 'the length of time');
  } catch {
    return NaN;
  }
}

/** `100/1s`, `20/10s`, `1000/1h`: a rate as `parseRate` reads it. */
export function formatRate({ jobs, perSeconds }: Rate): string {
  const unit = perSeconds % 3600 === 0 ? [3600, 'h'] : perSeconds % 60 === 0 ? [60, 'm'] : [1, 's'];
  return `${jobs}/${perSeconds / (unit[0] as number)}${unit[1]}`;
}
