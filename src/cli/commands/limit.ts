import type { Command } from 'commander';
import { LIMIT_OPTIONS } from '../../config/options.js';
import { ExitCode, JobqError } from '../../errors.js';
import type { KindLimit, KindLimitStatus } from '../../queue/limits.js';
import { addConnectionOptions, optionFor, type ConnectionOptions } from '../options.js';
import { alignedColumns } from '../output.js';
import { withReadyQueue } from '../ready-queue.js';

interface KindOptions extends ConnectionOptions {
  kind: string;
}

/** `jobq limit set|remove|list`: limits on kinds, held by every worker of the queue. */
export function registerLimit(program: Command): void {
  const limit = program
    .command('limit')
    .description('limits on kinds, held by every worker on every machine: set, remove and list them')
    .addHelpText(
      'after',
      `
Examples:
  jobq limit set --kind email --concurrency 10         # the mail provider takes 10 requests at once
  jobq limit set --kind import --group-concurrency 1   # one import at a time per account (--group)
  jobq limit list
  jobq limit remove --kind email

A job counts as running from its claim until it is settled or its lease runs out. Workers take a
new or changed limit within about 100 ms; it is a row in the database and outlasts restarts.
Setting a kind's limits again replaces them: those not given are lifted.`,
    );

  addConnectionOptions(limit.command('set'))
    .description("set or change a kind's limits")
    .requiredOption('--kind <kind>', 'the kind to limit')
    .addOption(optionFor(LIMIT_OPTIONS.concurrency))
    .addOption(optionFor(LIMIT_OPTIONS.groupConcurrency))
    .action(async (options: KindOptions & KindLimit) => {
      const limit: KindLimit = {
        ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
        ...(options.groupConcurrency !== undefined && { groupConcurrency: options.groupConcurrency }),
      };
      if (Object.keys(limit).length === 0) throw new JobqError(`give a limit: ${Object.values(LIMIT_OPTIONS).map((option) => option.flags.split(' ')[0]).join(' or ')}`, ExitCode.usage);
      await withReadyQueue(options, async (queue, out) => {
        await queue.setLimit(options.kind, limit);
        out.line(`kind ${JSON.stringify(options.kind)}: ${describeLimit(limit)}`);
      });
    });

  addConnectionOptions(limit.command('remove'))
    .description("lift a kind's limit")
    .requiredOption('--kind <kind>', 'the kind to release')
    .action(async (options: KindOptions) => {
      await withReadyQueue(options, async (queue, out) => {
        const removed = await queue.removeLimit(options.kind);
        out.line(removed ? `kind ${JSON.stringify(options.kind)}: no limit now` : `kind ${JSON.stringify(options.kind)} had no limit`);
      });
    });

  addConnectionOptions(limit.command('list'))
    .description('the limits set, with the jobs of each kind running now')
    .option('--json', 'print a JSON array')
    .action(async (options: ConnectionOptions & { json?: boolean }) => {
      await withReadyQueue(options, async (queue, out) => {
        const limits = await queue.limits();
        if (options.json) out.line(JSON.stringify(limits));
        else for (const line of limitTable(limits)) out.line(line);
      });
    });
}

function describeLimit({ concurrency, groupConcurrency }: KindLimit): string {
  const perGroup = groupConcurrency === undefined ? '' : `${groupConcurrency} in each group`;
  if (concurrency === undefined) return `at most ${perGroup} running at once`;
  return `at most ${concurrency} running at once${perGroup === '' ? '' : `, ${perGroup}`}`;
}

function limitTable(limits: KindLimitStatus[]): string[] {
  if (limits.length === 0) return ['no limits; set one with "jobq limit set --kind K --concurrency N"'];
  const cell = (n: number | null) => (n === null ? '-' : String(n));
  return alignedColumns([['kind', 'concurrency', 'per group', 'running'], ...limits.map((l) => [l.kind, cell(l.concurrency), cell(l.groupConcurrency), String(l.running)])]);
}
