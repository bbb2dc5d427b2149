// Timers for jobs that come due later (a delayed job, a retry, a snooze), so that a worker looks
// when they do rather than at its next poll. Only for the next minute, and at most 1,000 at once
// per owner (a producer queueing a job a day ahead, or thousands a second, holds no timer for
// each): jobs beyond that are found by polling.
const AHEAD_MS = 60_000;
const MAX_TIMERS = 1000;

/** Calls `wake` when each time given comes (one timer per millisecond); the timers keep no process alive. */
export class DueTimers {
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(private readonly wake: () => void) {}

  /** Jobs come due in `ms`. */
  in(ms: number): void {
    if (!(ms >= 0 && ms <= AHEAD_MS) || this.timers.size >= MAX_TIMERS) return;
    // One millisecond more: the server counts the job's run_after in microseconds from its commit, before this.
    const at = Math.ceil(performance.now() + ms) + 1;
    if (this.timers.has(at)) return;
    const timer = setTimeout(() => {
      this.timers.delete(at);
      this.wake();
    }, at - performance.now());
    this.timers.set(at, timer.unref());
  }

  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
