import type { Command } from 'commander';
import { LIMIT_OPTIONS } from '../../config/options.js';
import type { KindLimitStatus } from '../../queue/limits.js';
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
  jobq limit set --kind email --concurrency 10    # the mail provider takes 10 requests at once
  jobq limit list
  jobq limit remove --kind email

A job counts as running from its claim until it is settled or its lease runs out. Workers take a
new or changed limit within about 100 ms; it is a row in the database and outlasts restarts.`,
    );

  addConnectionOptions(limit.command('set'))
    .description("set or change a kind's limit")
    .requiredOption('--kind <kind>', 'the kind to limit')
    .addOption(optionFor(LIMIT_OPTIONS.concurrency).makeOptionMandatory())
    .action(async (options: KindOptions & { concurrency: number }) => {
      await withReadyQueue(options, async (queue, out) => {
        await queue.setLimit(options.kind, { concurrency: options.concurrency });
        out.line(`kind ${JSON.stringify(options.kind)}: at most ${options.concurrency} running at once`);
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

function limitTable(limits: KindLimitStatus[]): string[] {
  if (limits.length === 0) return ['no limits; set one with "jobq limit set --kind K --concurrency N"'];
  return alignedColumns([['kind', 'concurrency', 'running'], ...limits.map((l) => [l.kind, String(l.concurrency), String(l.running)])]);
}
