import { setTimeout as sleep } from 'node:timers/promises';
import { DatabaseClosedError } from '../db/connect.js';
import type { SkippedSchedule } from '../queue/schedules.js';

// How often a worker looks for schedules that have come due: a tick is enqueued within about
// this long of its time. The look is one range read of a small table; jittered so that many
// workers started together do not all look at once.
const TICK_EVERY_MS = 500;

/**
 * Every worker runs one: there is no leader to elect or lose. Which worker enqueues a tick is
 * settled in the database (see schedules.ts), so it does not matter how many look at once.
 * Nothing the ticker meets stops the worker: a schedule that cannot be used is skipped by
 * `enqueueDue`, and any other failure of a pass is reported and the next pass tried (outages are
 * ridden out below it). Each problem is reported once per worker, not at every pass.
 */
export async function runScheduleTicker(
  enqueueDue: () => Promise<{ skipped: SkippedSchedule[] }>,
  report: (message: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const reported = new Set<string>();
  const reportOnce = (message: string) => {
    if (reported.has(message)) return;
    reported.add(message);
    report(message);
  };
  while (!signal.aborted) {
    try {
      const { skipped } = await enqueueDue();
      for (const { name, reason } of skipped) reportOnce(`schedule ${JSON.stringify(name)} is skipped: ${reason}; fix it with "jobq schedule add" or remove it`);
    } catch (error) {
      if (error instanceof DatabaseClosedError) return;
      reportOnce(`schedules could not be ticked: ${(error as Error).message}`);
    }
    await sleep(TICK_EVERY_MS * (0.75 + Math.random() / 2), undefined, { signal }).catch(() => undefined);
  }
}
