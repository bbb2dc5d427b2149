import { resolveDatabaseUrl } from '../config/database-url.js';
import { DEFAULTS } from '../config/defaults.js';
import { JobQueue } from '../job-queue.js';
import type { ChildConnection } from '../processes/messages.js';
import { Supervisor, type ProcessingEvents, type SupervisorPlan } from '../processes/supervisor.js';
import { replicaOf, type ConnectionOptions } from './options.js';
import { claimLine, connectionLine, jobCancelledLine, jobFailedLine, LineWriter, paint, progressLine, summaryLines, warningLine } from './output.js';
import { ProgressLine } from './progress.js';
import { onInterrupts } from './signals.js';

/**
 * Runs a supervisor in the foreground for `start-processing` and `work`: checks the table once,
 * prints what the workers report, stops gracefully on the first Ctrl-C/SIGTERM and at once on the
 * second, prints the summary. `plan` makes the children's plan for the connection the options
 * name. With `progress` (a drain that prints no other line as it goes), a progress line on a
 * terminal. With `verbose` (`--verbose`), the stack of an error a worker died of. Returns the exit
 * code.
 */
export async function runSupervised(
  options: ConnectionOptions,
  plan: (connection: ChildConnection) => SupervisorPlan,
  { progress = false, verbose = false } = {},
): Promise<number> {
  const url = resolveDatabaseUrl(options.databaseUrl);
  const replica = replicaOf(options);
  const queue = await JobQueue.open({ url, table: options.table, reconnect: true, ...(replica !== undefined && { replicaUrl: replica.url }) });
  try {
    await queue.assertReady();
    return await supervise(queue, plan({ url, table: options.table, ...(replica !== undefined && { replica }) }), progress, verbose);
  } finally {
    await queue.close();
  }
}

async function supervise(queue: JobQueue, plan: SupervisorPlan, progress: boolean, verbose: boolean): Promise<number> {
  let supervisor: Supervisor | undefined;
  const out = new LineWriter(process.stdout, () => supervisor?.stop());
  const err = new LineWriter(process.stderr);
  const events: ProcessingEvents = {
    claimed: (consumer, ids) => out.line(claimLine(consumer, ids)),
    failedJobs: (consumer, ids) => err.line(paint.yellow(`consumer  ${consumer}: lease ran out ${DEFAULTS.maxLeaseExpiries} times in a row, moved to failed: [${ids.join(', ')}]`)),
    jobFailed: (worker, id, attempt, maxAttempts, error, final) => err.line(jobFailedLine(`worker ${worker}`, id, attempt, maxAttempts, error, final)),
    jobCancelled: (worker, id) => err.line(jobCancelledLine(`worker ${worker}`, id)),
    progress: (_generator, counter) => out.line(progressLine(counter)),
    connection: (worker, state, detail) => err.line(connectionLine(worker, state, detail)),
    warning: (worker, message) => err.line(warningLine(worker, message)),
    workerExited: (worker, how, next, stack) => {
      err.line(paint.red(`${worker} died (${how}); ${next}`));
      if (verbose && stack !== undefined) err.line(stack);
    },
    metricsServed: (worker, url) => err.line(`${worker}: metrics on ${url}`),
  };
  supervisor = new Supervisor(plan, events);
  const removeSignalHandlers = onInterrupts(
    (signal) => {
      err.line(paint.yellow(`${signal}: stopping; workers finish the jobs in hand (Ctrl-C again to quit at once)`));
      supervisor?.stop();
    },
    (signal) => {
      err.line(paint.red(`${signal} again: quitting now; unfinished claims return to the queue when their lease ends`));
      supervisor?.kill();
    },
  );
  const stopProgress = progress ? drawProgress(queue, supervisor) : () => undefined;
  try {
    const summary = await supervisor.run(queue);
    stopProgress();
    for (const line of summaryLines(summary)) out.line(line);
    if (summary.problem !== undefined) err.line(paint.red(`jobq: ${summary.problem}`));
    return summary.exitCode;
  } finally {
    stopProgress();
    removeSignalHandlers();
  }
}

/** A drain's progress line: jobs consumed so far, the rate, and how many are left once the table has been counted. */
function drawProgress(queue: JobQueue, supervisor: Supervisor): () => void {
  const line = new ProgressLine('consumed');
  if (!line.shown) return () => undefined;
  let waiting: number | undefined;
  queue.stats().then(
    (stats) => (waiting = stats.counts.unclaimed + stats.counts.scheduled + stats.counts.claimed),
    () => undefined,
  );
  const timer = setInterval(() => {
    const { consumed } = supervisor.counts;
    line.update(consumed, waiting === undefined ? undefined : { count: waiting - consumed });
  }, 250);
  return () => {
    clearInterval(timer);
    line.end();
  };
}
