import { Option, type Command } from 'commander';
import { LIMIT_OPTIONS } from '../../config/options.js';
import { ExitCode, JobqError } from '../../errors.js';
import { formatRate, type Rate } from '../../config/rate.js';
import type { KindLimit, KindLimitStatus } from '../../queue/types.js';
import { addConnectionOptions, optionFor, rateArgument, type ConnectionOptions } from '../options.js';
import { alignedColumns } from '../output.js';
import { withReadyQueue } from '../ready-queue.js';
import { EVERY_KIND } from '../../queue/limits.js';

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
  jobq limit set --kind charge --rate 100/1s           # the payment API takes 100 calls a second
  jobq limit set --kind sync --group-rate 10/1m        # each account's API: 10 calls a minute
  jobq limit set --kind '*' --concurrency 50           # at most 50 jobs of any kinds at once
  jobq limit list
  jobq limit remove --kind email

A job counts as running from its claim until it is settled or its lease runs out. Workers take a
new or changed limit within about 100 ms; it is a row in the database and outlasts restarts.
Setting a kind's limits again replaces them: those not given are lifted. The kind "*" limits every
kind together (concurrency and rate); while it is set, claims of the queue take turns.`,
    );

  addConnectionOptions(limit.command('set'))
    .description("set or change a kind's limits")
    .requiredOption('--kind <kind>', 'the kind to limit, or "*" for every kind together')
    .addOption(optionFor(LIMIT_OPTIONS.concurrency))
    .addOption(optionFor(LIMIT_OPTIONS.groupConcurrency))
    .addOption(new Option('--rate <n/duration>', 'most jobs of the kind claimed in any window of that length, e.g. 100/1s').argParser(rateArgument))
    .addOption(new Option('--group-rate <n/duration>', 'most jobs of each group of the kind claimed in any window of that length').argParser(rateArgument))
    .action(async (options: KindOptions & KindLimit) => {
      const limit: KindLimit = {
        ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
        ...(options.groupConcurrency !== undefined && { groupConcurrency: options.groupConcurrency }),
        ...(options.rate !== undefined && { rate: options.rate }),
        ...(options.groupRate !== undefined && { groupRate: options.groupRate }),
      };
      if (Object.keys(limit).length === 0) throw new JobqError('give a limit: --concurrency, --group-concurrency, --rate or --group-rate', ExitCode.usage);
      await withReadyQueue(options, async (queue, out) => {
        await queue.setLimit(options.kind, limit);
        out.line(`${kindName(options.kind)}: ${describeLimit(limit)}`);
      });
    });

  addConnectionOptions(limit.command('remove'))
    .description("lift a kind's limit")
    .requiredOption('--kind <kind>', 'the kind to release')
    .action(async (options: KindOptions) => {
      await withReadyQueue(options, async (queue, out) => {
        const removed = await queue.removeLimit(options.kind);
        out.line(removed ? `${kindName(options.kind)}: no limit now` : `${kindName(options.kind)} had no limit`);
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

const kindName = (kind: string) => (kind === EVERY_KIND ? 'every kind' : `kind ${JSON.stringify(kind)}`);

function describeLimit({ concurrency, groupConcurrency, rate, groupRate }: KindLimit): string {
  const parts = [
    both(concurrency === undefined ? undefined : `${concurrency} running at once`, groupConcurrency === undefined ? undefined : [`${groupConcurrency}`, 'running at once']),
    both(rate === undefined ? undefined : `${rate.jobs} claimed ${per(rate)}`, groupRate === undefined ? undefined : [`${groupRate.jobs}`, `claimed ${per(groupRate)}`]),
  ];
  return parts.filter((part) => part !== '').join('; ');
}

/** `at most 10 running at once, 2 in each group`, `at most 1 running at once in each group`. */
function both(kindWide: string | undefined, perGroup: [count: string, what: string] | undefined): string {
  if (perGroup === undefined) return kindWide === undefined ? '' : `at most ${kindWide}`;
  return kindWide === undefined ? `at most ${perGroup[0]} ${perGroup[1]} in each group` : `at most ${kindWide}, ${perGroup[0]} in each group`;
}

const WINDOWS: Record<number, string> = { 1: 'per second', 60: 'per minute', 3600: 'per hour', 86_400: 'per day' };
const per = ({ perSeconds }: Rate) => WINDOWS[perSeconds] ?? `per ${perSeconds} seconds`;

function limitTable(limits: KindLimitStatus[]): string[] {
  if (limits.length === 0) return ['no limits; set one with "jobq limit set --kind K --concurrency N"'];
  const cell = (value: number | Rate | null) => (value === null ? '-' : typeof value === 'number' ? String(value) : formatRate(value));
  return alignedColumns([
    ['kind', 'concurrency', 'per group', 'rate', 'group rate', 'running'],
    ...limits.map((l) => [l.kind === EVERY_KIND ? '* (every kind)' : l.kind, cell(l.concurrency), cell(l.groupConcurrency), cell(l.rate), cell(l.groupRate), String(l.running)]),
  ]);
}
