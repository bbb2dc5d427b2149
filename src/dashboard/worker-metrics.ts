import { Counter, Histogram, Registry } from 'prom-client';
import type { Worker } from '../worker/worker.js';
import type { Access } from './access.js';
import { listen } from './http.js';
import { createMetricsServer } from './metrics-server.js';

/** A worker's Prometheus endpoint: the URL to scrape, the worker to report once it runs, and its close. */
export interface WorkerMetricsServer {
  url: string;
  attach(worker: Worker): void;
  close(): void;
}

/**
 * Listens for Prometheus before the worker starts (a port in use then fails the command before it
 * claims anything); `attach` the worker once it runs. Returns the URL to scrape.
 */
export async function listenForWorkerMetrics(host: string, port: number, access: Access): Promise<WorkerMetricsServer> {
  let registry: Registry | undefined;
  const server = createMetricsServer(() => registry, access);
  const url = `${await listen(server, host, port)}/metrics`;
  return {
    url,
    attach: (worker) => (registry = workerMetrics(worker)),
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}

/**
 * One worker process's own view, for `jobq work --metrics-port`: its counters since it started
 * and how long its handlers take. The dashboard's /metrics has the whole queue's.
 */
export function workerMetrics(worker: Worker): Registry {
  const registry = new Registry();
  const counter = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  counter('jobq_worker_jobs_completed_total', 'Jobs this worker completed', () => worker.counters.completed);
  counter('jobq_worker_jobs_failed_total', 'Jobs that failed for good in this worker', () => worker.counters.failed);
  counter('jobq_worker_jobs_retried_total', 'Handler failures this worker sent back for another attempt', () => worker.counters.retried);
  counter('jobq_worker_jobs_lost_total', 'Jobs whose lease ran out while their handler ran in this worker (another worker may run them again)', () => worker.counters.lost);
  counter('jobq_worker_warnings_total', 'Warnings of this worker: schedules it skips, a stop that left jobs to their leases, wake-ups it cannot get', () => worker.counters.warnings);
  counter('jobq_worker_claims_total', 'Claims this worker made', () => worker.counters.claims);
  counter('jobq_worker_wake_ups_total', 'Times an enqueue in another process ended the statement this idle worker waits in', () => worker.counters.wakeUps);
  counter('jobq_worker_empty_claims_total', 'Claims of this worker that found candidates but locked none', () => worker.counters.emptyClaims);
  counter('jobq_worker_deadlock_retries_total', 'Transactions of this worker run again after a deadlock or a certification conflict (Galera, Group Replication)', () => worker.counters.deadlocks);
  const durations = new Histogram({
    name: 'jobq_worker_handler_duration_seconds',
    help: 'How long handlers ran, by kind and outcome',
    labelNames: ['kind', 'outcome'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60],
    registers: [registry],
  });
  worker.on('completed', (job, _result, { durationMs }) => durations.observe({ kind: job.kind ?? '', outcome: 'completed' }, durationMs / 1000));
  worker.on('failed', (job, _error, { durationMs, final }) => durations.observe({ kind: job.kind ?? '', outcome: final ? 'failed' : 'retried' }, durationMs / 1000));
  return registry;
}
