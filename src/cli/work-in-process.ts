import type { Access } from '../dashboard/access.js';
import type { WorkerMetricsServer } from '../dashboard/worker-metrics.js';
import { connectionEventDetail } from '../db/connection-events.js';
import { JobqError } from '../errors.js';
import { JobQueue } from '../job-queue.js';
import type { LoadedHandlers } from '../processes/handler-module.js';
import type { ResolvedWorkerOptions } from '../worker/options.js';
import { replicaOf, type ConnectionOptions } from './options.js';
import { lostLeaseMessage } from '../worker/worker.js';
import { connectionLine, jobCancelledLine, jobFailedLine, warningLine, LineWriter, paint, summaryLines, type SummaryFigures } from './output.js';
import { onInterrupts } from './signals.js';

/**
 * `jobq work` with one process: `queue.work` in the command's own process, with no children to
 * start. Prints failures as they happen and a summary at the end; returns the exit code.
 */
export async function runWorkerInProcess(
  connection: ConnectionOptions,
  handlers: LoadedHandlers,
  options: ResolvedWorkerOptions,
  metrics?: { host: string; port: number; access: Access },
): Promise<number> {
  const started = performance.now();
  const replica = replicaOf(connection);
  const queue = await JobQueue.open({
    url: connection.databaseUrl,
    table: connection.table,
    reconnect: true,
    ...(replica !== undefined && { replicaUrl: replica.url, replicaMaxLagSeconds: replica.maxLagSeconds }),
  });
  let served: WorkerMetricsServer | undefined;
  try {
    await queue.assertReady();
    const err = new LineWriter(process.stderr);
    if (metrics !== undefined) {
      // Loaded only here: prom-client took 30-35 ms of every jobq command's start.
      const { listenForWorkerMetrics } = await import('../dashboard/worker-metrics.js');
      served = await listenForWorkerMetrics(metrics.host, metrics.port, metrics.access);
      err.line(`metrics on ${served.url}`);
    }
    const worker = queue.work(handlers, options);
    served?.attach(worker);
    const stop = () => void worker.stop().catch(() => undefined);
    const out = new LineWriter(process.stdout, stop);
    worker.on('failed', (job, error, { final }) =>
      err.line(jobFailedLine('worker 1', job.id, job.attempts, options.maxAttempts, error instanceof Error ? error.message : String(error), final)),
    );
    worker.on('cancelled', (job) => err.line(jobCancelledLine('worker 1', job.id)));
    worker.on('connection', (event) => err.line(connectionLine('worker 1', event.state, connectionEventDetail(event))));
    worker.on('warning', ({ message }) => err.line(warningLine('worker 1', message)));
    worker.on('lost', (job) => err.line(warningLine('worker 1', lostLeaseMessage(job.id))));
    const removeSignalHandlers = onInterrupts(
      (signal) => {
        err.line(paint.yellow(`${signal}: stopping; running jobs finish, claimed jobs not started go back at once (Ctrl-C again to quit at once)`));
        stop();
      },
      (signal) => err.line(paint.red(`${signal} again: quitting now; unfinished claims return to the queue when their lease ends`)),
    );
    let problem: JobqError | undefined;
    try {
      await worker.finished;
    } catch (error) {
      if (!(error instanceof JobqError)) throw error;
      problem = error;
    } finally {
      removeSignalHandlers();
    }
    const { completed, claims, emptyClaims, failed, retried, deadlocks, lockWaits } = worker.counters;
    const summary: SummaryFigures = {
      consumed: completed,
      claims,
      emptyClaims,
      movedToFailed: failed,
      retriedAfterError: retried,
      deadlockRetries: deadlocks,
      lockWaitRetries: lockWaits,
      elapsedSeconds: (performance.now() - started) / 1000,
      stats: await queue.stats(),
    };
    for (const line of summaryLines(summary)) out.line(line);
    if (problem !== undefined) err.line(paint.red(`jobq: ${problem.message}`));
    return problem?.exitCode ?? 0;
  } finally {
    served?.close();
    await queue.close();
  }
}
