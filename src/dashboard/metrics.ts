import { Counter, Gauge, Registry } from 'prom-client';
import type { JobQueue } from '../job-queue.js';
import { EVERY_KIND } from '../queue/limits.js';
import { JOB_STATUSES, type QueueStats } from '../queue/types.js';

/** The label for jobs without a kind. */
const NO_KIND = '';
/** The `kind` of the oldest waiting job of any kind, jobs without one included: what to alert on. */
export const ANY_KIND = '(any)';

/**
 * The queue as Prometheus sees it, read from the database at each scrape: counts from the
 * covering index scans that `stats` makes, totals from jobq_counters. Counters are set to the
 * database's totals (they only grow, and so stay counters across dashboard restarts).
 */
export class QueueMetrics {
  readonly registry = new Registry();
  private readonly jobs = this.gauge('jobq_jobs', 'Jobs in the table, by status and kind ("" for none)', ['status', 'kind']);
  private readonly oldestWaiting = this.gauge(
    'jobq_oldest_waiting_seconds',
    `How long the longest-waiting due job has waited since it came due, per kind; kind="${ANY_KIND}" over all jobs`,
    ['kind'],
  );
  private readonly completed = this.counter('jobq_jobs_completed_total', 'Jobs completed since the queue was made', ['kind']);
  private readonly failed = this.counter('jobq_jobs_failed_total', 'Jobs failed for good (attempts used up)', ['kind']);
  private readonly retried = this.counter('jobq_jobs_retried_total', 'Handler failures sent back for another attempt', ['kind']);
  private readonly claims = this.counter('jobq_claims_total', 'Claims by every worker', []);
  private readonly emptyClaims = this.counter('jobq_empty_claims_total', 'Claims that found candidates but locked none (another worker was faster)', []);
  private readonly limitConcurrency = this.gauge('jobq_limit_concurrency', 'A kind\'s limit: most of its jobs running at once (kind "*": of every kind together)', ['kind']);
  private readonly limitGroupConcurrency = this.gauge('jobq_limit_group_concurrency', "A kind's limit per group: most jobs of each of its groups running at once", ['kind']);
  private readonly limitRate = this.gauge('jobq_limit_rate', 'A kind\'s rate limit, in jobs per second (kind "*": of every kind together)', ['kind']);
  private readonly limitGroupRate = this.gauge('jobq_limit_group_rate', "A kind's rate limit per group, in jobs per second for each of its groups", ['kind']);
  private readonly limitHeldBack = this.gauge('jobq_limit_held_back', 'Due jobs of a kind its limit holds back now', ['kind']);
  private readonly skippedSchedules = this.gauge('jobq_schedules_skipped', 'Schedules the workers skip: their cron or time zone cannot be read (jobq schedule list says why)', []);

  constructor(private readonly queue: JobQueue) {}

  /** The text exposition format, freshly read. */
  async render(): Promise<string> {
    const stats = await this.queue.stats();
    const waiting = await this.queue.oldestWaitingByKind();
    this.registry.resetMetrics();
    if (stats.everyKindLimit !== null) this.setLimit(EVERY_KIND, stats.everyKindLimit);
    for (const { kind, counts, totals, limit } of stats.byKind) {
      const label = kind ?? NO_KIND;
      if (limit !== null) this.setLimit(label, limit);
      for (const status of JOB_STATUSES) this.jobs.set({ status, kind: label }, counts[status]);
      this.completed.inc({ kind: label }, totals.completed);
      this.failed.inc({ kind: label }, totals.failed);
      this.retried.inc({ kind: label }, totals.retried);
    }
    for (const [kind, seconds] of waiting) this.oldestWaiting.set({ kind }, seconds);
    if (stats.headAgeSeconds !== null) this.oldestWaiting.set({ kind: ANY_KIND }, stats.headAgeSeconds);
    this.claims.inc(stats.claims.total);
    this.emptyClaims.inc(stats.claims.empty);
    this.skippedSchedules.set(stats.skippedSchedules.length);
    return this.registry.metrics();
  }

  private setLimit(kind: string, limit: NonNullable<QueueStats['everyKindLimit']>): void {
    if (limit.concurrency !== null) this.limitConcurrency.set({ kind }, limit.concurrency);
    if (limit.groupConcurrency !== null) this.limitGroupConcurrency.set({ kind }, limit.groupConcurrency);
    if (limit.rate !== null) this.limitRate.set({ kind }, limit.rate.jobs / limit.rate.perSeconds);
    if (limit.groupRate !== null) this.limitGroupRate.set({ kind }, limit.groupRate.jobs / limit.groupRate.perSeconds);
    this.limitHeldBack.set({ kind }, limit.heldBack);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private gauge(name: string, help: string, labelNames: string[]): Gauge {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  private counter(name: string, help: string, labelNames: string[]): Counter {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }
}
