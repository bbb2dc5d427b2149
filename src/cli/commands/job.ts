import type { Command } from 'commander';
import { ExitCode, JobqError } from '../../errors.js';
import type { JobInfo } from '../../queue/job-info.js';
import { addConnectionOptions, parseId, type ConnectionOptions } from '../options.js';
import { alignedColumns, formatSeconds } from '../output.js';
import { withReadyQueue } from '../ready-queue.js';

interface JobOptions extends ConnectionOptions {
  json?: boolean;
}

/** `jobq job ID`: one job, whole. */
export function registerJob(program: Command): void {
  addConnectionOptions(program.command('job'))
    .description('show one job: its payload, status, attempts, errors, result, progress and lease')
    .argument('<id>', 'the job id', parseId)
    .option('--json', 'print the job as one JSON object')
    .addHelpText(
      'after',
      `
Examples:
  jobq job 1041
  jobq job 1041 --json | jq .result

Results are kept by workers run with --keep-results (or --keep-done); progress is what the
handler last reported with job.progress(value). Exit code 8 when there is no such job (never
queued, or finished and deleted).`,
    )
    .action(async (id: number, options: JobOptions) => {
      await withReadyQueue(options, async (queue, out) => {
        const job = await queue.job(id);
        if (job === undefined) throw new JobqError(`no job ${id}: never queued, or finished and deleted`, ExitCode.notFound);
        if (options.json === true) out.line(JSON.stringify(job));
        else for (const line of jobLines(job)) out.line(line);
      });
    });
}

const json = (value: unknown) => JSON.stringify(value);

/** The job as `jobq job` prints it: a field a line, then its errors, oldest first. */
function jobLines(job: JobInfo): string[] {
  const rows: string[][] = [
    ['kind', job.kind ?? '(none)'],
    ['status', statusText(job)],
    ...(job.group === null ? [] : [['group', job.group]]),
    ['payload', json(job.payload)],
    ['priority', String(job.priority)],
    ['attempts', `${job.attempts}${job.snoozes > 0 ? ` (snoozed ${job.snoozes} times)` : ''}${job.leaseExpiries > 0 ? ` (${job.leaseExpiries} leases ran out)` : ''}`],
    ...(job.key === null ? [] : [['key', job.key]]),
    ...(job.uniqueKey === null ? [] : [['unique key', `${job.uniqueKey} (while ${job.uniqueWhile})`]]),
    ...(job.timeoutMs === null ? [] : [['timeout', `${job.timeoutMs} ms`]]),
    ['created', job.createdAt.toISOString()],
    ...(job.progress === null ? [] : [['progress', json(job.progress)]]),
    ...(job.result === undefined ? [] : [['result', json(job.result)]]),
  ];
  const lines = [`job ${job.id}`, ...alignedColumns(rows.map(([name, value]) => [`  ${name}:`, value!]))];
  if (job.errors.length > 0) lines.push('  errors:');
  for (const error of job.errors) {
    lines.push(`    attempt ${error.attempt} at ${error.at.toISOString()}: ${error.message}`);
    for (const frame of error.stack?.split('\n') ?? []) lines.push(`      ${frame}`);
  }
  if (job.errors.length === 0 && job.lastError !== null) lines.push(`  last error: ${job.lastError}`);
  return lines;
}

function statusText(job: JobInfo): string {
  const at = job.runAfter.toISOString();
  const cancelling = job.cancelRequestedAt === null ? '' : ', cancel asked';
  switch (job.status) {
    case 'unclaimed':
      return 'waiting';
    case 'scheduled':
      return `scheduled, due at ${at}`;
    case 'claimed': {
      const left = job.leaseLeftSeconds!;
      return `running on owner ${job.ownerId ?? 'unknown'}, ${left >= 0 ? `lease ends in ${formatSeconds(left)}` : `lease ran out ${formatSeconds(-left)} ago`}${cancelling}`;
    }
    default:
      return `${job.status} at ${at}`;
  }
}
