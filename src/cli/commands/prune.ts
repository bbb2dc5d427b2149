import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseDuration } from '../../config/duration.js';
import { ExitCode, JobqError } from '../../errors.js';
import { addConnectionOptions, type ConnectionOptions } from '../options.js';
import { ProgressLine } from '../progress.js';
import { withReadyQueue } from '../ready-queue.js';

interface PruneCliOptions extends ConnectionOptions {
  doneOlderThan?: number;
  failedOlderThan?: number;
}

const duration = (value: string): number => {
  try {
    return parseDuration(value, 'the age');
  } catch {
    throw new InvalidArgumentError(`expected a length of time like 90s, 15m, 12h, 7d or 2w, got ${JSON.stringify(value)}.`);
  }
};

export function registerPrune(program: Command): void {
  addConnectionOptions(program.command('prune'))
    .description('delete done, failed and cancelled jobs that ended longer ago than an age, in small chunks')
    .addOption(new Option('--done-older-than <age>', 'done jobs (kept by --keep-done / keepDone) that ended this long ago: 90s, 15m, 12h, 7d, 2w').argParser(duration))
    .addOption(new Option('--failed-older-than <age>', 'failed jobs (attempts used up) and cancelled jobs that ended this long ago').argParser(duration))
    .addHelpText(
      'after',
      `
Examples:
  jobq prune --done-older-than 7d
  jobq prune --done-older-than 7d --failed-older-than 30d

Deletes oldest first, 1,000 rows per statement, each its own transaction: workers keep claiming
while it runs, and stopping it half way loses nothing but the rest of the pruning.`,
    )
    .action(async (options: PruneCliOptions) => {
      if (options.doneOlderThan === undefined && options.failedOlderThan === undefined) {
        throw new JobqError('say what to prune: --done-older-than and/or --failed-older-than, e.g. --done-older-than 7d', ExitCode.usage);
      }
      await withReadyQueue(options, async (queue, out) => {
        const progress = new ProgressLine('pruned');
        const result = await queue
          .prune({
            ...(options.doneOlderThan !== undefined && { doneOlderThan: options.doneOlderThan }),
            ...(options.failedOlderThan !== undefined && { failedOlderThan: options.failedOlderThan }),
            ...(progress.shown && { onProgress: (soFar, left) => progress.update(soFar.done + soFar.failed + soFar.cancelled, left === undefined ? undefined : { count: left }) }),
          })
          .finally(() => progress.end());
        const keys = result.keys > 0 ? ` and ${result.keys} keys of gone jobs` : '';
        const windows = result.windows > 0 ? ` and ${result.windows} unique keys whose window ended` : '';
        const groups = result.groups > 0 ? ` and ${result.groups} lock rows of idle groups` : '';
        out.line(`pruned ${result.done} done, ${result.failed} failed and ${result.cancelled} cancelled jobs${keys}${groups}${windows} in ${result.chunks} chunk${result.chunks === 1 ? '' : 's'}`);
      });
    });
}
