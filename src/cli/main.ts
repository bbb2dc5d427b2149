import { Command, CommanderError } from 'commander';
import { ExitCode, JobqError } from '../errors.js';
import { registerCancel } from './commands/cancel.js';
import { registerDashboard } from './commands/dashboard.js';
import { registerEnqueue } from './commands/enqueue.js';
import { registerJob } from './commands/job.js';
import { registerLimit } from './commands/limit.js';
import { registerPauseAndResume } from './commands/pause.js';
import { registerPrune } from './commands/prune.js';
import { registerSchedule } from './commands/schedule.js';
import { registerRequeueFailed } from './commands/requeue-failed.js';
import { registerSetupTables } from './commands/setup-tables.js';
import { registerStartProcessing } from './commands/start-processing.js';
import { registerStats } from './commands/stats.js';
import { registerWork } from './commands/work.js';
import { paint } from './output.js';

/** The `jobq` program: commander wiring only; each command is a thin layer over JobQueue. */
export function buildProgram(): Command {
  const program = new Command('jobq')
    .description('A job queue in a MySQL/MariaDB table: generators insert jobs, consumers claim them with SELECT ... FOR UPDATE SKIP LOCKED')
    .version(process.env.npm_package_version ?? '0.1.0')
    .option('--verbose', 'show stack traces of unexpected errors')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      `
Quick start (a local MariaDB or MySQL 8 with root and no password):
  jobq setup-tables
  jobq start-processing --duration 10
  jobq stats

Your own jobs:
  jobq enqueue --kind email --payload '{"to": "ann@example.com"}'
  jobq work --handler ./handler.js --kind email

Exit codes: 0 ok, 1 unexpected error, 2 bad usage, 3 cannot connect, 4 server too old,
5 table missing or of the wrong shape, 6 refused to drop rows, 7 a worker crashed, 130 Ctrl-C twice.`,
    );
  registerSetupTables(program);
  registerStartProcessing(program);
  registerStats(program);
  registerEnqueue(program);
  registerWork(program);
  registerRequeueFailed(program);
  registerCancel(program);
  registerJob(program);
  registerPrune(program);
  registerPauseAndResume(program);
  registerLimit(program);
  registerSchedule(program);
  registerDashboard(program);
  for (const command of program.commands) command.exitOverride().showHelpAfterError(`(run "jobq ${command.name()} --help" for usage)`);
  return program;
}

/** Runs the CLI; every error ends as one line on stderr and a documented exit code. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  // A reader that stops early (`jobq --help | head`) ends our output, not with a stack trace; the
  // commands that print as they go stop printing too (LineWriter).
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    process.exitCode = exitCodeFor(error);
    if (error instanceof CommanderError) return; // commander has printed its own one-line message
    const verbose = argv.includes('--verbose');
    if (error instanceof JobqError) {
      console.error(paint.red(`jobq: ${error.message}`));
      if (verbose && error.cause instanceof Error) console.error(error.cause.stack);
    } else {
      const message = error instanceof Error ? error.message : String(error);
      console.error(paint.red(`jobq: unexpected error: ${message}${verbose ? '' : ' (run with --verbose for details)'}`));
      if (verbose && error instanceof Error) console.error(error.stack);
    }
  }
}

function exitCodeFor(error: unknown): number {
  if (error instanceof JobqError) return error.exitCode;
  if (error instanceof CommanderError) {
    const informational = ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code);
    return informational ? ExitCode.ok : ExitCode.usage;
  }
  return ExitCode.internal;
}
