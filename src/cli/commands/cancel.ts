import type { Command } from 'commander';
import type { CancelResult } from '../../queue/cancel.js';
import { addConnectionOptions, idList, type ConnectionOptions } from '../options.js';
import { LineWriter } from '../output.js';
import { withReadyQueue } from '../ready-queue.js';

interface CancelOptions extends ConnectionOptions {
  ids: number[];
}

export function registerCancel(program: Command): void {
  addConnectionOptions(program.command('cancel'))
    .description('cancel jobs by id: waiting, delayed and failed ones at once, running ones through their worker')
    .requiredOption('--ids <id...>', 'the job ids', idList)
    .addHelpText(
      'after',
      `
Examples:
  jobq cancel --ids 1041
  jobq cancel --ids 1041 1042 1043

Waiting, delayed and failed jobs end \`cancelled\` at once. A running job is marked: the worker
that holds it fires its handler's signal within a second or two, and the job ends \`cancelled\`
(or \`done\`, if it finished first). Cancelled jobs are counted in \`jobq stats\` and removed by
\`jobq prune --failed-older-than\`. Prints how many were cancelled and names each job that was
not cancelled at once: running (with the process that holds it), done, or no such job.`,
    )
    .action(async (options: CancelOptions) => {
      const result = await withReadyQueue(options, (queue) => queue.cancel(options.ids));
      const out = new LineWriter();
      for (const line of cancelLines(result)) out.line(line);
    });
}

function cancelLines(result: CancelResult): string[] {
  const jobs = (n: number) => `${n} job${n === 1 ? '' : 's'}`;
  const lines = [`cancelled ${jobs(result.cancelled.length)}, cancelling ${result.cancelling.length} running, ${result.done.length + result.unknown.length} not`];
  for (const { id, ownerId } of result.cancelling) lines.push(`job ${id}: running (owner ${ownerId ?? 'unknown'}); its worker cancels it`);
  for (const id of result.done) lines.push(`job ${id}: done already`);
  for (const id of result.unknown) lines.push(`job ${id}: no such job (never queued, or finished and deleted)`);
  return lines;
}
