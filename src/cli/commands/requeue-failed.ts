import type { Command } from 'commander';
import { JobQueue } from '../../queue/job-queue.js';
import { addConnectionOptions, idList, type ConnectionOptions } from '../options.js';
import { LineWriter } from '../output.js';

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
      const queue = await JobQueue.open({ url: options.databaseUrl, table: options.table });
      try {
        await queue.assertReady();
        const count = await queue.requeueFailed(options.ids);
        new LineWriter().line(`requeued ${count} failed job${count === 1 ? '' : 's'}`);
      } finally {
        await queue.close();
      }
    });
}
