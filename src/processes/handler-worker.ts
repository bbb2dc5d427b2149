/**
 * One of the processes of `jobq work --processes N`: runs `queue.work` with the user's handler
 * module and reports its counters and failures to the supervisor. Lanes come from jobq_lanes, as
 * for any worker; the supervisor only restarts crashed processes and sums up.
 */
import { lostLeaseMessage, noCounts, type WorkerCounters } from '../worker/worker.js';
import { onlyKinds } from '../worker/handler-kinds.js';
import { resolveWorkerOptions } from '../worker/options.js';
import { JobQueue } from '../job-queue.js';
import { readConfig, report, reportConnection, runWorker, stopRequests } from './child-runtime.js';
import { Access, DASHBOARD_TOKEN_ENV, tokenFromEnv } from '../dashboard/access.js';
import { loadHandlers } from './handler-module.js';
import type { ChildConnection, HandlerWorkerConfig } from './messages.js';

const REPORT_EVERY_MS = 200;

runWorker(async () => {
  const config = await readConfig<HandlerWorkerConfig>('handler-worker');
  const stop = stopRequests();
  const handlers = onlyKinds(await loadHandlers(config.handler), config.kinds);
  const queue = await openQueue(config);
  const access = new Access(tokenFromEnv(), config.metrics?.host ?? '127.0.0.1', DASHBOARD_TOKEN_ENV);
  // Loaded only with --metrics-port: prom-client took 30-35 ms of each worker process's start.
  const served = config.metrics === undefined ? undefined : await (await import('../dashboard/worker-metrics.js')).listenForWorkerMetrics(config.metrics.host, config.metrics.port, access);
  if (served !== undefined) report({ type: 'metrics', url: served.url });
  try {
    const worker = queue.work(handlers, config.options);
    served?.attach(worker);
    const { maxAttempts } = resolveWorkerOptions(config.options);
    worker.on('failed', (job, error, { final }) =>
      report({ type: 'job-failed', id: job.id, attempt: job.attempts, maxAttempts, error: error instanceof Error ? error.message : String(error), final }),
    );
    worker.on('cancelled', (job) => report({ type: 'job-cancelled', id: job.id }));
    worker.on('connection', reportConnection);
    worker.on('warning', ({ message }) => report({ type: 'warning', message }));
    worker.on('lost', (job) => report({ type: 'warning', message: lostLeaseMessage(job.id) }));
    let reported: WorkerCounters = noCounts();
    const reportCounters = () => {
      const now = { ...worker.counters };
      const delta = Object.fromEntries(Object.entries(now).map(([key, value]) => [key, value - reported[key as keyof WorkerCounters]])) as unknown as WorkerCounters;
      reported = now;
      if (Object.values(delta).some((n) => n > 0)) report({ type: 'worked', counters: delta });
    };
    const timer = setInterval(reportCounters, REPORT_EVERY_MS);
    // The stop may have come while the module was still loading.
    const stopWorker = () => void worker.stop().catch(() => undefined);
    if (stop.requested) stopWorker();
    else stop.signal.addEventListener('abort', stopWorker);
    try {
      await worker.finished;
    } finally {
      clearInterval(timer);
      reportCounters();
    }
  } finally {
    served?.close();
    await queue.close();
  }
});

/** Opens the queue with reconnects, telling the supervisor about outages. */
function openQueue(config: ChildConnection): Promise<JobQueue> {
  return JobQueue.open({
    url: config.url,
    table: config.table,
    reconnect: true,
    waitForServer: true,
    onConnectionEvent: reportConnection,
    ...(config.replica !== undefined && { replicaUrl: config.replica.url, replicaMaxLagSeconds: config.replica.maxLagSeconds }),
  });
}
