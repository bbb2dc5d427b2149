import { setTimeout as sleep } from 'node:timers/promises';

// How often a worker looks for schedules that have come due: a tick is enqueued within about
// this long of its time. The look is one range read of a small table; jittered so that many
// workers started together do not all look at once.
const TICK_EVERY_MS = 500;

/**
 * Every worker runs one: there is no leader to elect or lose. Which worker enqueues a tick is
 * settled in the database (see schedules.ts), so it does not matter how many look at once.
 * `enqueueDue` throws only what the worker cannot ride out (outages are ridden out below it).
 */
export async function runScheduleTicker(enqueueDue: () => Promise<number>, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await enqueueDue();
    await sleep(TICK_EVERY_MS * (0.75 + Math.random() / 2), undefined, { signal }).catch(() => undefined);
  }
}
