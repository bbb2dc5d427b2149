import type { ConnectionEvent } from '../db/connection-events.js';
import { Chalk, supportsColor } from 'chalk';
import type { QueueStats, ServerInfo } from '../queue/types.js';
import { JOB_STATUSES } from '../queue/types.js';
import type { ProcessingSummary } from '../processes/supervisor.js';
import { describeLayout } from '../queue/table-layout.js';
import { formatRate } from '../config/rate.js';
import type { KindLimitStatus } from '../queue/types.js';

/** Colours only on a terminal; NO_COLOR turns them off, FORCE_COLOR on (https://no-color.org). */
function colourLevel(): 0 | 1 | 2 | 3 {
  if (process.env.FORCE_COLOR !== undefined) return supportsColor === false ? 1 : supportsColor.level;
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return 0;
  return supportsColor === false ? 0 : supportsColor.level;
}

export const paint = new Chalk({ level: colourLevel() });

/**
 * Writes one whole line per call. Lines from many workers arrive here one at a time (the workers
 * report over IPC; only this process writes), so they never interleave. A closed pipe
 * (`jobq ... | head`) ends the output quietly instead of with EPIPE.
 */
export class LineWriter {
  private closed = false;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stdout,
    onClosed: () => void = () => undefined,
  ) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      this.closed = true;
      onClosed();
    });
  }

  line(text = ''): void {
    if (!this.closed) this.stream.write(`${text}\n`);
  }
}

/** Rows of cells as lines, each column as wide as its widest cell, two spaces apart. */
export function alignedColumns(rows: readonly string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
}

/** The article's claim line: `consumer  4 #records = 3 - [48, 84, 130]`. */
export function claimLine(consumer: number, ids: readonly number[]): string {
  return `${paint.cyan(`consumer  ${consumer}`)} #records = ${ids.length} - [${ids.join(', ')}]`;
}

/** A worker cancelled a job it held. */
export const jobCancelledLine = (worker: string, id: number): string => paint.yellow(`${worker}: job ${id} cancelled`);

/** A handler failed on a job. */
export function jobFailedLine(worker: string, id: number, attempt: number, maxAttempts: number, error: string, final: boolean): string {
  return paint.yellow(`${worker}: job ${id} failed (attempt ${attempt} of ${maxAttempts}): ${error}; ${final ? 'moved to failed' : 'will be retried'}`);
}

/** A worker lost its connection, or has it back. */
export function connectionLine(worker: string, state: ConnectionEvent['state'], detail: string): string {
  switch (state) {
    case 'lost':
      return paint.yellow(`${worker}: lost the connection to the server (${detail}); reconnecting`);
    case 'restored':
      return paint.green(`${worker}: connection is back ${detail}`);
    case 'moved':
      return paint.yellow(`${worker}: lost the connection, moved to the next server of the URL: ${detail}`);
    case 'replica-bypassed':
      return paint.yellow(`${worker}: ${detail}`);
    case 'replica-used':
      return paint.green(`${worker}: ${detail}`);
  }
}

/** A schedule the workers skip, and why. */
export const skippedScheduleLine = (name: string, reason: string) => `schedule ${JSON.stringify(name)} is skipped by the workers: ${reason}`;

/** Something a worker rode out but someone should look at. */
export function warningLine(worker: string, message: string): string {
  return paint.yellow(`${worker}: warning: ${message}`);
}

/** The article's generator progress line. */
export function progressLine(counter: number): string {
  return paint.dim(`counter = ${counter}`);
}

/** The article's `select status, count(status) from jobs group by status`, every status shown. */
export function statusTable(stats: QueueStats): string[] {
  const rows: Array<[string, number]> = [...JOB_STATUSES.map((status): [string, number] => [status, stats.counts[status]]), ['total', stats.total]];
  const width = Math.max(13, ...rows.map(([, n]) => String(n).length));
  return [
    `| status    | ${'count(status)'.padStart(width)} |`,
    ...rows.map(([status, n]) => `| ${status.padEnd(9)} | ${String(n).padStart(width)} |`),
  ];
}

export function formatSeconds(seconds: number): string {
  return seconds < 10 ? `${seconds.toFixed(2)} s` : `${seconds.toFixed(1)} s`;
}

/** What `stats` shows besides the counts: where, the server, and the rate since the last reading. */
export interface StatsContext {
  where: string;
  server: ServerInfo;
  /** Jobs completed (deleted or marked done) per second since the previous reading; null on the first. */
  completedPerSecond: number | null;
}

/** A kind's limits in a few characters: `3`, `1/group`, `100/1s`, `3, 1/group`; empty without any. */
export function limitCell(limit: Omit<KindLimitStatus, 'kind' | 'running'> | null): string {
  if (limit === null) return '';
  const { concurrency, groupConcurrency, rate, groupRate } = limit;
  const cells = [
    ...(concurrency === null ? [] : [String(concurrency)]),
    ...(groupConcurrency === null ? [] : [`${groupConcurrency}/group`]),
    ...(rate === null ? [] : [formatRate(rate)]),
    ...(groupRate === null ? [] : [`${formatRate(groupRate)}/group`]),
  ];
  return cells.join(', ');
}

/** The stats command's text: the status table, kinds, head-of-queue age, owners, rate, server. */
export function statsLines(stats: QueueStats, context: StatsContext): string[] {
  const owners = stats.claimedByOwner.map(
    ({ ownerId, count, expired }) => `consumer ${ownerId ?? '?'}: ${count}${expired > 0 ? ` (${expired} lease${expired === 1 ? '' : 's'} expired)` : ''}`,
  );
  // Kinds with nothing in the table now, paused or scheduled are left out (the --json keeps them:
  // they may have running totals).
  const kinds = stats.byKind.filter((entry) => entry.paused || entry.limit !== null || entry.nextScheduledAt !== null || Object.values(entry.counts).some((n) => n > 0));
  const kindWidth = Math.max(6, ...kinds.map(({ kind }) => (kind ?? '(none)').length));
  const lines = [
    paint.bold(`table ${stats.table} in ${context.where}`),
    ...statusTable(stats),
    `oldest unclaimed job: ${stats.headAgeSeconds === null ? 'none waiting' : `${formatSeconds(stats.headAgeSeconds)} old`}`,
    `claimed per owner: ${owners.length === 0 ? 'none' : owners.join(', ')}`,
  ];
  if (context.completedPerSecond !== null) lines.push(`completed: ${Math.round(context.completedPerSecond)} jobs/s since the last reading`);
  const every = stats.everyKindLimit;
  if (every !== null) lines.push(`limit on every kind: ${limitCell(every)} (${every.running} running, ${every.heldBack} held back)`);
  if (kinds.length > 0) {
    // The limit column only when a kind has one: `3` at most running at once, `1/group` of each group.
    const limited = kinds.some((entry) => entry.limit !== null);
    const columns = ['waiting', 'scheduled', 'running', 'failed', 'done', 'cancelled', 'paused', ...(limited ? ['limit'] : [])];
    const scheduled = kinds.some((entry) => entry.nextScheduledAt !== null);
    const nextTick = (at: Date | null) => (scheduled ? ` ${(at?.toISOString() ?? '').padEnd(24)} |` : '');
    const limitWidth = Math.max(7, ...kinds.map((entry) => limitCell(entry.limit).length));
    const width = (column: number) => (columns[column] === 'limit' ? limitWidth : Math.max(7, columns[column]!.length));
    lines.push(`| ${'kind'.padEnd(kindWidth)} | ${columns.map((column, i) => column.padStart(width(i))).join(' | ')} |${scheduled ? ` ${'next schedule (UTC)'.padEnd(24)} |` : ''}`);
    for (const { kind, counts, paused, limit, nextScheduledAt } of kinds) {
      const cells = [...[counts.unclaimed, counts.scheduled, counts.claimed, counts.failed, counts.done, counts.cancelled].map(String), paused ? 'yes' : '', ...(limited ? [limitCell(limit)] : [])];
      lines.push(`| ${(kind ?? '(none)').padEnd(kindWidth)} | ${cells.map((cell, i) => cell.padStart(width(i))).join(' | ')} |${nextTick(nextScheduledAt)}`);
    }
  }
  for (const { name, reason } of stats.skippedSchedules) lines.push(paint.yellow(skippedScheduleLine(name, reason)));
  const { server } = context;
  lines.push(
    paint.dim(
      `server: ${server.version}, default isolation ${server.isolationLevel} (jobq uses READ-COMMITTED), binlog ${server.binlogEnabled ? server.binlogFormat : 'off'}`,
    ),
  );
  if (stats.layout.partitions > 0) lines.push(paint.dim(`table: ${describeLayout(stats.layout)}`));
  if (server.galera !== undefined) {
    const { state, clusterStatus, clusterSize } = server.galera;
    const line = `galera: this node ${state}, cluster ${clusterStatus} with ${clusterSize} node${clusterSize === 1 ? '' : 's'}`;
    lines.push(state === 'Synced' && clusterStatus === 'Primary' ? paint.dim(line) : paint.yellow(line));
  }
  return lines;
}

/** Stable keys for scripts: the same content as the text. */
export function statsJson(stats: QueueStats, database: string, context: Omit<StatsContext, 'where'>): object {
  return {
    database,
    table: stats.table,
    counts: stats.counts,
    total: stats.total,
    byKind: stats.byKind,
    everyKindLimit: stats.everyKindLimit,
    oldestUnclaimedAgeSeconds: stats.headAgeSeconds,
    claimedByOwner: stats.claimedByOwner.map(({ ownerId, count, expired }) => ({ ownerId, count, expiredLeases: expired })),
    pausedKinds: stats.pausedKinds,
    skippedSchedules: stats.skippedSchedules,
    partitions: stats.layout.partitions,
    partitionedBy: stats.layout.method ?? null,
    completedPerSecond: context.completedPerSecond,
    server: context.server,
  };
}

/** What a summary prints: a supervised run's, or one in-process worker's (no generators, no crashes). */
export type SummaryFigures = Pick<ProcessingSummary, 'consumed' | 'elapsedSeconds' | 'claims' | 'emptyClaims' | 'movedToFailed' | 'retriedAfterError' | 'deadlockRetries' | 'lockWaitRetries' | 'stats'> &
  Partial<Pick<ProcessingSummary, 'generated' | 'lostOwnership' | 'crashes' | 'consumingSeconds'>>;

export function summaryLines(summary: SummaryFigures): string[] {
  const rate = summary.elapsedSeconds > 0 ? summary.consumed / summary.elapsedSeconds : 0;
  const emptyPercent = summary.claims > 0 ? (100 * summary.emptyClaims) / summary.claims : 0;
  const lines = [
    '',
    paint.bold('summary'),
    ...((summary.generated ?? 0) > 0 ? [`jobs generated = ${summary.generated}`] : []),
    `jobs consumed = ${summary.consumed}`,
    `elapsed = ${summary.elapsedSeconds.toFixed(1)} s`,
    `jobs/s = ${Math.round(rate)}`,
    ...(summary.consumingSeconds === undefined ? [] : [`consuming = ${summary.consumingSeconds.toFixed(1)} s (first claim to last delete)`]),
    `claims = ${summary.claims}`,
    `empty claims = ${summary.emptyClaims} (${emptyPercent.toFixed(1)} %)`,
  ];
  if ((summary.lostOwnership ?? 0) > 0) lines.push(paint.yellow(`jobs whose lease ran out before they were deleted (left to their new owner) = ${summary.lostOwnership}`));
  if (summary.retriedAfterError > 0) lines.push(paint.yellow(`jobs that failed and will be retried = ${summary.retriedAfterError}`));
  if (summary.movedToFailed > 0) lines.push(paint.yellow(`jobs moved to failed (attempts used up) = ${summary.movedToFailed}`));
  if (summary.deadlockRetries + summary.lockWaitRetries > 0) {
    lines.push(`retried transactions = ${summary.deadlockRetries} deadlocks or certification conflicts, ${summary.lockWaitRetries} lock wait timeouts`);
  }
  if ((summary.crashes ?? 0) > 0) lines.push(paint.red(`worker crashes = ${summary.crashes}`));
  lines.push('', paint.bold('status counts'), ...statusTable(summary.stats));
  return lines;
}
