import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { Access, DASHBOARD_TOKEN_ENV, tokenFromEnv } from '../../dashboard/access.js';
import { DASHBOARD_DEFAULTS } from '../../config/defaults.js';
import { OPTIONS } from '../../config/options.js';
import { loadHandlers } from '../../processes/handler-module.js';
import { handlerWorkerChildren, type HandlerWorkers } from '../../processes/handler-worker-children.js';
import { onlyKinds } from '../../worker/handler-kinds.js';
import { resolveWorkerOptions } from '../../worker/options.js';
import { addConnectionOptions, addReplicaOptions, numberIn, optionFor, timeoutArgument, type ConnectionOptions } from '../options.js';
import { runSupervised } from '../supervised-run.js';
import { runWorkerInProcess } from '../work-in-process.js';

interface WorkOptions extends ConnectionOptions {
  handler: string;
  processes: number;
  /** The old name of --processes, hidden. */
  consumers?: number;
  concurrency: number;
  batchSize: number;
  kind?: string[];
  once?: boolean;
  lease: number;
  maxAttempts: number;
  maxSnoozes: number;
  retryDelayMs: number;
  pollIntervalMs: number;
  lightClaimPauseMs: number;
  keepDone?: boolean;
  keepResults?: boolean;
  timeout?: Record<string, number>;
  metricsPort?: number;
  metricsHost: string;
}

export function registerWork(program: Command): void {
  addReplicaOptions(addConnectionOptions(program.command('work')))
    .description('run your own code on queued jobs: queue.work with your handler module, in one process or several')
    .requiredOption('--handler <file>', 'ES module or CommonJS file: export default async (job) => ..., or { kind: async (job) => ... }')
    .addOption(optionFor(OPTIONS.concurrency))
    .addOption(optionFor(OPTIONS.processes))
    .addOption(optionFor({ ...OPTIONS.processes, flags: '-c, --consumers <n>', default: undefined }).hideHelp())
    .addOption(optionFor(OPTIONS.batchSize))
    .option('--kind <kind...>', 'only jobs of these kinds')
    .option('--once', 'exit when no job is due (delayed jobs and retries wait for the next run): for cron and tests')
    .addOption(optionFor(OPTIONS.leaseSeconds))
    .addOption(optionFor(OPTIONS.maxAttempts))
    .addOption(optionFor(OPTIONS.maxSnoozes))
    .addOption(optionFor(OPTIONS.retryDelayMs))
    .addOption(optionFor(OPTIONS.pollIntervalMs))
    .addOption(optionFor(OPTIONS.lightClaimPauseMs))
    .option('--keep-done', 'mark finished jobs done instead of deleting them')
    .option('--keep-results', "keep jobs whose handler returned a value as done, with it (for `jobq job ID`); prune removes them")
    .addOption(new Option(OPTIONS.timeoutMs.flags, OPTIONS.timeoutMs.help).argParser(timeoutArgument))
    .addOption(
      new Option('--metrics-port <port>', 'serve each process\'s counters and handler durations for Prometheus at /metrics: process N on port + N - 1 (0: any free ports)').argParser(numberIn(0, 65_535)),
    )
    .addOption(new Option('--metrics-host <address>', `address for --metrics-port; any other than this machine needs $${DASHBOARD_TOKEN_ENV}`).default(DASHBOARD_DEFAULTS.host))
    .addHelpText(
      'after',
      `
The handler module:
  export default async function (job) { ... }          // job: { id, kind, payload, attempts, signal, snooze, progress }
  export default { email: async (job) => { ... } }     // or one handler per kind; only those are claimed

A handler that returns completes its job (with --keep-results its value is kept: jobq job ID);
one that throws sends it back to the queue after
--retry-delay-ms, doubling per attempt, and to failed after --max-attempts (with the error kept).
One that calls job.snooze(seconds) puts its job off that long, its attempt given back, at most
--max-snoozes times.
With --timeout, a handler still running after that long sees job.signal fire and its run fails
("timed out after N ms"); one that ignores the signal is given up on a second later.
A job cancelled while it runs (jobq cancel) fires job.signal within a second or two.
Ctrl-C stops gracefully: running jobs finish, claimed jobs not yet started go back at once.

Examples:
  jobq work --handler ./send-email.js --kind email
  jobq work --handler ./handler.mjs --concurrency 50 --processes 4
  jobq work --handler ./handler.mjs --once              drain what is due, then exit
  jobq work --handler ./handler.mjs --timeout 30s report=10m
                                                        30 s a run, reports 10 minutes
  jobq work --handler ./handler.mjs --replica-url mysql://jobq:secret@replica1:3306/jobq
                                                        candidates from a replica, claims on the primary
  jobq work --handler ./handler.mjs --metrics-port 9751  Prometheus scrapes this worker at :9751/metrics`,
    )
    .action(async (options: WorkOptions, command: Command) => {
      const handlers = onlyKinds(await loadHandlers(options.handler), options.kind); // a bad module fails here, once
      // A map of handlers claims its kinds only, and --once waits for those only.
      const kinds = typeof handlers === 'function' ? undefined : Object.keys(handlers);
      const workerOptions = resolveWorkerOptions({
        concurrency: options.concurrency,
        batchSize: options.batchSize,
        leaseSeconds: options.lease,
        maxAttempts: options.maxAttempts,
        maxSnoozes: options.maxSnoozes,
        retryDelayMs: options.retryDelayMs,
        pollIntervalMs: options.pollIntervalMs,
        lightClaimPauseMs: options.lightClaimPauseMs,
        keepDone: options.keepDone ?? false,
        keepResults: options.keepResults ?? false,
        once: options.once ?? false,
        ...(options.timeout !== undefined && { timeoutMs: options.timeout }),
      });
      // Checked here, once, before any process starts: another address needs the token.
      const access = options.metricsPort === undefined ? undefined : new Access(tokenFromEnv(), options.metricsHost, DASHBOARD_TOKEN_ENV);
      const metrics = access === undefined ? undefined : { port: options.metricsPort!, host: options.metricsHost, access };
      const processes = options.consumers ?? options.processes;
      if (processes === 1) {
        // Exit once done even if the handler module keeps connections or timers open.
        process.exit(await runWorkerInProcess(options, handlers, workerOptions, metrics));
      }
      const workers: HandlerWorkers = {
        count: processes,
        handler: resolve(options.handler),
        ...(kinds !== undefined && { kinds }),
        // Each process runs until the supervisor sees the queue drained (--once) or stops it.
        options: { ...workerOptions, once: false },
        ...(metrics !== undefined && { metrics: { host: metrics.host, port: metrics.port } }),
      };
      process.exitCode = await runSupervised(
        options,
        (connection) => ({
          children: handlerWorkerChildren(connection, workers),
          stop: { untilEmpty: workerOptions.once, ignoreDelayed: true, ...(kinds !== undefined && { kinds }) },
        }),
        { verbose: command.optsWithGlobals().verbose === true },
      );
    });
}
