import type { Command } from 'commander';
import { ExitCode } from '../../errors.js';
import type { CancelResult } from '../../queue/cancel.js';
import { addConnectionOptions, idList, type ConnectionOptions } from '../options.js';
import { formatSeconds, LineWriter } from '../output.js';
import { withReadyQueue } from '../ready-queue.js';

interface CancelOptions extends ConnectionOptions {
  ids: number[];
}

export function registerCancel(program: Command): void {
  addConnectionOptions(program.command('cancel'))
    .description('remove waiting, delayed or failed jobs by id; jobs a worker is running are left alone')
    .requiredOption('--ids <id...>', 'the job ids', idList)
    .addHelpText(
      'after',
      `
Examples:
  jobq cancel --ids 1041
  jobq cancel --ids 1041 1042 1043

Prints how many were cancelled and names each job that was not: running (with its owner and
lease), done, or no such job. Exit code 0 when nothing named is left running, 6 when a running
job was left alone.`,
    )
    .action(async (options: CancelOptions) => {
      const result = await withReadyQueue(options, (queue) => queue.cancel(options.ids));
      const out = new LineWriter();
      for (const line of cancelLines(result)) out.line(line);
      if (result.running.length > 0) process.exitCode = ExitCode.refused;
    });
}

function cancelLines(result: CancelResult): string[] {
  const notCancelled = result.running.length + result.done.length + result.unknown.length;
  const jobs = (n: number) => `${n} job${n === 1 ? '' : 's'}`;
  const lines = [`cancelled ${jobs(result.cancelled.length)}, ${notCancelled} not`];
  for (const { id, ownerId, leaseLeftSeconds } of result.running) {
    const lease = leaseLeftSeconds >= 0 ? `lease ends in ${formatSeconds(leaseLeftSeconds)}` : `lease ran out ${formatSeconds(-leaseLeftSeconds)} ago`;
    lines.push(`job ${id}: running, held by owner ${ownerId ?? 'unknown'} (${lease}); left alone`);
  }
  for (const id of result.done) lines.push(`job ${id}: done already`);
  for (const id of result.unknown) lines.push(`job ${id}: no such job (never queued, or finished and deleted)`);
  return lines;
}
