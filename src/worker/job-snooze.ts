import { ExitCode, JobqError } from '../errors.js';
import { MAX_DELAY_SECONDS } from '../queue/new-jobs.js';

/** A snooze's length, checked: a one-line error for anything but 0 to ten years of seconds. */
export function snoozeSeconds(seconds: unknown): number {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0 || seconds > MAX_DELAY_SECONDS) {
    throw new JobqError(`job.snooze takes a number of seconds from 0 to ${MAX_DELAY_SECONDS}, not ${JSON.stringify(seconds)}`, ExitCode.usage);
  }
  return seconds;
}

/** The error a job fails with once its handler has put it off `maxSnoozes` times and asks again. */
export const tooManySnoozes = (maxSnoozes: number): Error => new Error(`snoozed ${maxSnoozes} times, the most maxSnoozes allows`);
