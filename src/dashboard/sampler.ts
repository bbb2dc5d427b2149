import type { JobQueue } from '../job-queue.js';
import type { QueueStats } from '../queue/types.js';

const EVERY_MS = 2000;
const KEEP = (15 * 60 * 1000) / EVERY_MS;

export interface RatePoint {
  /** Unix seconds. */
  at: number;
  completedPerSecond: number;
  enqueuedPerSecond: number;
}

/**
 * Reads the queue's stats every 2 s for every page that is open (they all get the latest
 * reading, so the database load does not grow with the number of viewers), and keeps 15 minutes
 * of throughput: completed per second from the running totals, enqueued per second from the ids
 * handed out.
 */
export class StatsSampler {
  latest: { at: Date; stats: QueueStats } | undefined;
  readonly rates: RatePoint[] = [];
  private timer: NodeJS.Timeout | undefined;
  private previous: { at: number; completed: number; maxId: number } | undefined;

  constructor(
    private readonly queue: JobQueue,
    private readonly onError: (error: unknown) => void,
  ) {}

  async start(): Promise<void> {
    await this.sample();
    this.timer = setInterval(() => void this.sample().catch(this.onError), EVERY_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Reads now (after an action, so that the page shows its effect at once). */
  async sample(): Promise<void> {
    const stats = await this.queue.stats();
    const at = Date.now();
    this.latest = { at: new Date(at), stats };
    const completed = stats.byKind.reduce((sum, entry) => sum + entry.totals.completed, 0);
    const { previous } = this;
    // A reading right after an action is shown, but makes no point of the chart of its own.
    if (previous !== undefined && at - previous.at < EVERY_MS / 2) return;
    if (previous !== undefined) {
      const seconds = (at - previous.at) / 1000;
      this.rates.push({
        at: at / 1000,
        completedPerSecond: Math.max(0, completed - previous.completed) / seconds,
        enqueuedPerSecond: Math.max(0, stats.maxId - previous.maxId) / seconds,
      });
      if (this.rates.length > KEEP) this.rates.shift();
    }
    this.previous = { at, completed, maxId: stats.maxId };
  }
}
