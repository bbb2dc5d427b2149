import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseClosedError } from '../db/connect.js';
import type { SkippedSchedule } from '../queue/schedules.js';

// How often a worker looks for schedules that have come due (a tick is enqueued within about
// this long of its time) and folds the counts of new jobs. Each is a range read, of a small table
// or of the jobs inserted since the last pass;
// jittered so that many workers started together do not all look at once.
const PASS_EVERY_MS = 500;

type Topic = 'schedule' | 'counts';

/** What a worker does now and then beside claiming. */
export interface UpkeepSteps {
  /** Enqueues the jobs of schedules that have come due (queue/schedules.ts); the schedules skipped. */
  enqueueDueTicks(): Promise<{ skipped: SkippedSchedule[] }>;
  /**
   * Adds the new jobs into the kept counts: the rows of new jobs (queue/new-job-count.ts) and the
   * waiting jobs not counted yet (queue/uncounted-jobs.ts); they stay few where nobody reads stats.
   */
  foldNewJobs(): Promise<void>;
}

/**
 * Every worker runs one: there is no leader to elect or lose. Which worker enqueues a tick is
 * settled in the database (see schedules.ts), and folds take rows no other fold holds, so it does
 * not matter how many run at once. Nothing a pass meets stops the worker: a schedule that cannot
 * be used is skipped by `enqueueDueTicks`, and any other failure is reported and the next pass
 * tried (outages are ridden out below it). Each problem is reported once per worker, not at every
 * pass.
 */
export async function runUpkeep(steps: UpkeepSteps, report: (topic: Topic, message: string) => void, signal: AbortSignal): Promise<void> {
  const reported = new Set<string>();
  const reportOnce = (topic: Topic, message: string) => {
    if (reported.has(message)) return;
    reported.add(message);
    report(topic, message);
  };
  /** Runs a step, reporting its failure; false once the connection is closed (the worker is stopping). */
  const attempt = async (topic: Topic, step: () => Promise<void>, failed: string): Promise<boolean> => {
    try {
      await step();
      return true;
    } catch (error) {
      if (error instanceof DatabaseClosedError) return false;
      reportOnce(topic, `${failed}: ${(error as Error).message}`);
      return true;
    }
  };
  while (!signal.aborted) {
    const ticked = await attempt(
      'schedule',
      async () => {
        const { skipped } = await steps.enqueueDueTicks();
        for (const { name, reason } of skipped) reportOnce('schedule', `schedule ${JSON.stringify(name)} is skipped: ${reason}; fix it with "jobq schedule add" or remove it`);
      },
      'schedules could not be ticked',
    );
    if (!ticked || !(await attempt('counts', () => steps.foldNewJobs(), 'the counts of new jobs could not be folded'))) return;
    await sleep(PASS_EVERY_MS * (0.75 + Math.random() / 2), undefined, { signal }).catch(() => undefined);
  }
}
