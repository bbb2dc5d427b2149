import { Option, type Command } from 'commander';
import { ExitCode, JobqError } from '../../errors.js';
import { DEFAULT_PRIORITY } from '../../config/defaults.js';
import { PRIORITY_RANGE } from '../../queue/new-jobs.js';
import type { Schedule } from '../../queue/schedules.js';
import { addConnectionOptions, numberIn, type ConnectionOptions } from '../options.js';
import { withReadyQueue } from '../ready-queue.js';
import { alignedColumns, skippedScheduleLine } from '../output.js';

interface AddOptions extends ConnectionOptions {
  cron: string;
  kind: string;
  payload?: string;
  priority: number;
  timeZone: string;
  catchUp: 'latest' | 'all';
}

/** `jobq schedule add|list|remove`: recurring jobs, ticked by the running workers. */
export function registerSchedule(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('recurring jobs: add, list and remove cron schedules; running workers enqueue their ticks')
    .addHelpText(
      'after',
      `
Examples:
  jobq schedule add nightly-report --cron '0 2 * * *' --kind report --time-zone Europe/Berlin
  jobq schedule add heartbeat --cron '*/10 * * * * *' --kind ping          # 6 fields: seconds first
  jobq schedule add launch --cron '0 0 9 1 6 * 2027' --kind launch         # 7: a year last; ends after 2027
  jobq schedule list
  jobq schedule remove nightly-report`,
    );

  addConnectionOptions(schedule.command('add').argument('<name>', 'the schedule name (1-64 characters); adding it again replaces it'))
    .description('create or replace a schedule')
    .requiredOption('--cron <expression>', 'when: 5 fields (minute hour day month weekday), 6 with seconds first, 7 with a year last')
    .requiredOption('--kind <kind>', 'the kind of job enqueued at each tick')
    .option('--payload <json>', 'the payload of each job, any JSON value up to 64 KiB')
    .addOption(new Option('--priority <n>', 'the priority of each job (smaller runs first)').argParser(numberIn(PRIORITY_RANGE.min, PRIORITY_RANGE.max)).default(DEFAULT_PRIORITY))
    .addOption(new Option('--time-zone <zone>', 'IANA time zone the expression is read in').default('UTC'))
    .addOption(
      new Option('--catch-up <which>', 'after downtime: the latest missed tick only, or all of them (at most 1,000 per pass)').choices(['latest', 'all']).default('latest'),
    )
    .action(async (name: string, options: AddOptions) => {
      const payload = parsePayload(options.payload);
      await withReadyQueue(options, async (queue, out) => {
        const saved = await queue.schedule(name, options.cron, { kind: options.kind, payload, priority: options.priority }, { timeZone: options.timeZone, catchUp: options.catchUp });
        out.line(`schedule ${JSON.stringify(saved.name)}: ${saved.cron} (${saved.timeZone}), kind ${saved.job.kind}; next tick ${saved.nextTick!.toISOString()}`);
      });
    });

  addConnectionOptions(schedule.command('list'))
    .description("the queue's schedules with their next and last tick")
    .action(async (options: ConnectionOptions) => {
      await withReadyQueue(options, async (queue, out) => {
        for (const line of scheduleTable(await queue.schedules())) out.line(line);
      });
    });

  addConnectionOptions(schedule.command('remove').argument('<name>', 'the schedule to remove'))
    .description('remove a schedule (the jobs it enqueued stay)')
    .action(async (name: string, options: ConnectionOptions) => {
      await withReadyQueue(options, async (queue, out) => {
        if (!(await queue.unschedule(name))) throw new JobqError(`no schedule ${JSON.stringify(name)}; "jobq schedule list" shows them`, ExitCode.usage);
        out.line(`removed schedule ${JSON.stringify(name)}`);
      });
    });
}

function parsePayload(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new JobqError(`--payload is not JSON (${(error as Error).message}); quote it, e.g. --payload '{"day": "monday"}'`, ExitCode.usage);
  }
}

function scheduleTable(schedules: Schedule[]): string[] {
  if (schedules.length === 0) return ['no schedules; add one with "jobq schedule add NAME --cron EXPR --kind K"'];
  const rows = [
    ['name', 'cron', 'time zone', 'kind', 'next tick (UTC)', 'last tick (UTC)'],
    ...schedules.map((s) => [s.name, s.cron, s.timeZone, s.job.kind, s.nextTick?.toISOString() ?? 'ended', s.lastTick?.toISOString() ?? 'never']),
  ];
  const lines = alignedColumns(rows);
  const problems = schedules.filter((s) => s.problem !== null).map((s) => skippedScheduleLine(s.name, s.problem!));
  return [...lines, ...problems];
}
