import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { MAX_BATCH_SIZE } from '../../queue/types.js';
import { loadHandler } from '../../workers/handler-module.js';
import { addConnectionOptions, numberIn, type ConnectionOptions } from '../options.js';
import { runSupervised } from '../supervised-run.js';

interface WorkOptions extends ConnectionOptions {
  handler: string;
  consumers: number;
  batchSize: number;
  kind?: string;
  concurrency: number;
  once?: boolean;
  lease: number;
  maxAttempts: number;
  retryDelayMs: number;
  keepDone?: boolean;
  quiet?: boolean;
}

export function registerWork(program: Command): void {
  addConnectionOptions(program.command('work'))
    .description('run your own code on queued jobs: consumer processes that call your handler module')
    .requiredOption('--handler <file>', 'ES module or CommonJS file: default export async (job) => ..., or export handleBatch(jobs)')
    .addOption(new Option('-c, --consumers <n>', 'consumer processes').argParser(numberIn(1, 64)).default(2))
    .addOption(new Option('-b, --batch-size <n>', 'most jobs one claim may take').argParser(numberIn(1, MAX_BATCH_SIZE)).default(10))
    .option('--kind <kind>', 'only jobs of this kind')
    .addOption(new Option('--concurrency <n>', "jobs of one claim the default export may run at once").argParser(numberIn(1, 1000)).default(1))
    .option('--once', 'exit when no job is due (delayed jobs and retries wait for the next run): for cron and tests')
    .addOption(new Option('--lease <seconds>', 'a claim holds its jobs this long (renewed while the handler runs)').argParser(numberIn(1, 86_400, false)).default(60))
    .addOption(new Option('--max-attempts <n>', 'attempts per job before it goes to failed').argParser(numberIn(1, 1000)).default(5))
    .addOption(new Option('--retry-delay-ms <ms>', 'wait before the first retry of a failed job; doubles per attempt').argParser(numberIn(0, 3_600_000)).default(1000))
    .option('--keep-done', 'mark finished jobs done instead of deleting them')
    .option('-q, --quiet', 'no per-claim lines, only failures and the summary')
    .addHelpText(
      'after',
      `
The handler module:
  export default async function (job) { ... }        // job: { id, kind, payload, attempts }
  export async function handleBatch(jobs) { ... }     // optional: the whole claim at once

A handler that returns completes its job; one that throws sends it back to the queue after
--retry-delay-ms, doubling per attempt, and to failed after --max-attempts (with the error kept).

Examples:
  jobq work --handler ./send-email.js --kind email --consumers 4
  jobq work --handler ./handler.mjs --once            drain what is due, then exit`,
    )
    .action(async (options: WorkOptions) => {
      const handler = resolve(options.handler);
      await loadHandler(options.handler); // a bad path or a module without a handler fails here, once
      process.exitCode = await runSupervised(options, {
        generators: 0,
        consumers: options.consumers,
        batchSize: options.batchSize,
        commitEvery: 1,
        untilEmpty: options.once ?? false,
        ignoreDelayed: true,
        workMs: 0,
        pick: 'oldest',
        keepDone: options.keepDone ?? false,
        leaseSeconds: options.lease,
        maxAttempts: options.maxAttempts,
        quiet: options.quiet ?? false,
        handler,
        concurrency: options.concurrency,
        retryDelayMs: options.retryDelayMs,
        ...(options.kind !== undefined && { kind: options.kind }),
      });
    });
}
