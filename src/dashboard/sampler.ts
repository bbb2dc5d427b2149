import type { JobQueue } from '../job-queue.js';
import type { QueueStats } from '../queue/types.js';

const EVERY_MS = 2000;
const KEEP = (15 * 60 * 1000) / EVERY_MS;
// An open page asks for the stats every 2 s: two missed asks and nobody is watching.
const VIEWERS_GONE_MS = 5000;

export interface RatePoint {
  /** Unix seconds. */
  at: number;
  completedPerSecond: number;
  enqueuedPerSecond: number;
}

/**
 * The dashboard's readings. Every 2 s it reads the running totals and the highest id (two small
 * reads) for 15 minutes of throughput: completed per second, enqueued per second. The stats,
 * which count rows, it reads only while a page asks for them, at most every 2 s however many
 * pages do (each gets the latest reading): a dashboard nobody watches costs the database next to
 * nothing.
 */
export class StatsSampler {
  latest: { at: Date; stats: QueueStats } | undefined;
  readonly rates: RatePoint[] = [];
  private timer: NodeJS.Timeout | undefined;
  private previous: { at: number; completed: number; maxId: number } | undefined;
  private askedAt = -Infinity;
  private reading: Promise<void> | undefined;

  constructor(
    private readonly queue: JobQueue,
    private readonly onError: (error: unknown) => void,
  ) {}

  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick().catch(this.onError), EVERY_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The stats for a page: the latest reading if it is younger than 2 s, else a new one. */
  async forViewer(): Promise<StatsSampler['latest']> {
    this.askedAt = Date.now();
    if (this.latest === undefined || Date.now() - this.latest.at.getTime() >= EVERY_MS) await this.sample();
    return this.latest;
  }

  /**
   * Reads the stats after an action, so that the page shows its effect at once: a reading under
   * way may have begun before the action and miss it (a page then saw a limit just set missing),
   * so this one waits for it and begins another, or joins one begun since.
   */
  async sampleAfterAction(): Promise<void> {
    await this.reading?.catch(() => undefined);
    await this.sample();
  }

  /** Reads the stats now, or joins the reading under way. */
  private sample(): Promise<void> {
    this.reading ??= this.readStats().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async tick(): Promise<void> {
    if (Date.now() - this.askedAt < VIEWERS_GONE_MS) return this.sample();
    const { completed, maxId } = await this.queue.totals();
    this.record(Date.now(), completed, maxId);
  }

  private async readStats(): Promise<void> {
    const stats = await this.queue.stats();
    const at = Date.now();
    this.latest = { at: new Date(at), stats };
    this.record(
      at,
      stats.byKind.reduce((sum, entry) => sum + entry.totals.completed, 0),
      stats.maxId,
    );
  }

  private record(at: number, completed: number, maxId: number): void {
    const { previous } = this;
    // A reading right after an action is shown, but makes no point of the chart of its own.
    if (previous !== undefined && at - previous.at < EVERY_MS / 2) return;
    if (previous !== undefined) {
      const seconds = (at - previous.at) / 1000;
      this.rates.push({
        at: at / 1000,
        completedPerSecond: Math.max(0, completed - previous.completed) / seconds,
        enqueuedPerSecond: Math.max(0, maxId - previous.maxId) / seconds,
      });
      if (this.rates.length > KEEP) this.rates.shift();
    }
    this.previous = { at, completed, maxId };
  }
}
