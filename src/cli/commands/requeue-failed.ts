import type { Command } from 'commander';
import { addConnectionOptions, idList, type ConnectionOptions } from '../options.js';
import { withReadyQueue } from '../ready-queue.js';

interface RequeueOptions extends ConnectionOptions {
  ids?: number[];
}

export function registerRequeueFailed(program: Command): void {
  addConnectionOptions(program.command('requeue-failed'))
    .description('put failed jobs (attempts used up) back to unclaimed, with their attempts reset')
    .option('--ids <id...>', 'only these job ids (default: every failed job)', idList)
    .addHelpText(
      'after',
      `
Examples:
  jobq requeue-failed
  jobq requeue-failed --ids 1041 1042`,
    )
    .action(async (options: RequeueOptions) => {
      await withReadyQueue(options, async (queue, out) => {
        const count = await queue.requeueFailed(options.ids);
        out.line(`requeued ${count} failed job${count === 1 ? '' : 's'}`);
      });
    });
}
