const CRASH_WINDOW_MS = 60_000;
const CRASHES_TOLERATED = 5;

/**
 * When a crashed worker is started again: at once-ish, then backing off (250 ms doubling, at most
 * 5 s), and not at all once more than CRASHES_TOLERATED crashes fell within a minute: a crash loop
 * (a handler that kills its process on every job) ends the run instead of spinning.
 */
export class RestartPolicy {
  private readonly crashTimes: number[] = [];

  get crashes(): number {
    return this.crashTimes.length;
  }

  /** Records a crash; says how long to wait before the restart, or that the run must stop. */
  onCrash(now = Date.now()): { restartInMs: number } | { giveUp: string } {
    this.crashTimes.push(now);
    const recent = this.crashTimes.filter((t) => now - t < CRASH_WINDOW_MS).length;
    if (recent > CRASHES_TOLERATED) return { giveUp: `${recent} worker crashes within a minute` };
    return { restartInMs: Math.min(250 * 2 ** (recent - 1), 5_000) };
  }
}
