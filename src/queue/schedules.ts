import { createHash } from 'node:crypto';
import { Cron } from 'croner';
import type { Database } from '../db/database.js';
import type { Statement } from '../db/transaction.js';
import { ExitCode, JobqError } from '../errors.js';
import { KeyedInsert } from './keyed-insert.js';
import { toJobRow, type JobRow } from './new-jobs.js';
import { insertJobsSql, insertValues } from './sql/enqueue.js';
import { countNewJobs, NEW_JOBS_TABLE, UNMARKED } from './new-job-count.js';
import { listKindsSql } from '../claim/sql/counters.js';
import { KEYS_TABLE } from './sql/job-keys.js';
import * as scheduleSql from './sql/schedules.js';
import type { QuotedIdentifier } from '../config/identifiers.js';

/** What a schedule enqueues at each tick. */
export interface ScheduledJob {
  kind: string;
  payload?: unknown;
  priority?: number;
}

export interface ScheduleOptions {
  /** IANA time zone the cron expression is read in (default UTC): `0 2 * * *` at 02:00 there. */
  timeZone?: string;
  /**
   * After downtime: `latest` (default) enqueues only the most recent tick that was missed, `all`
   * every missed tick (at most 1,000 per pass; the rest follow on the next passes).
   */
  catchUp?: 'latest' | 'all';
}

/** A schedule as stored. */
export interface Schedule extends Required<ScheduleOptions> {
  name: string;
  cron: string;
  job: ScheduledJob;
  /**
   * The next tick that will be enqueued (it may lie in the past while no worker runs); null once
   * the ticks have ended (a cron with a year field, past its last tick).
   */
  nextTick: Date | null;
  /** The last tick enqueued; null before the first. */
  lastTick: Date | null;
  /** Why workers skip this schedule (its cron or time zone cannot be read); null when they do not. */
  problem: string | null;
}

/** A schedule that the workers skipped, and why. */
export interface SkippedSchedule {
  name: string;
  reason: string;
}

const MAX_CATCH_UP = 1000;
const NAME = /^.{1,64}$/su;

interface ScheduleRow {
  name: string;
  cron: string;
  time_zone: string;
  kind: string;
  payload: string | null;
  priority: number;
  catch_up: 'latest' | 'all';
  next_tick: string;
  last_tick: string | null;
}

/** The last moment a tick can be stored at (sql/schedules.ts, ENDED): TIMESTAMP ends there. */
const LAST_STORABLE = new Date(scheduleSql.ENDED * 1000);

/**
 * The cron expression, read by croner (5 fields, 6 with seconds first, or 7 with a year last;
 * names like MON and @daily), or a one-line error.
 */
export function parseCron(expression: string, timeZone: string): Cron {
  try {
    const cron = new Cron(expression, { timezone: timeZone, paused: true });
    cron.nextRun();
    return cron;
  } catch (error) {
    const reason = (error as Error).message.replace(/^\w+: /, '').split('. ')[0];
    throw new JobqError(`cron ${JSON.stringify(expression)} in time zone ${timeZone} cannot be used: ${reason}`, ExitCode.usage);
  }
}

/** The first tick after `after` that can be stored; null when there is none (the ticks have ended, or lie past 2038). */
function nextStorableTick(cron: Cron, after: Date): Date | null {
  const next = cron.nextRun(after);
  return next === null || next >= LAST_STORABLE ? null : next;
}

/** Creates or replaces a schedule; its first tick is the first one after now (by the server's clock). */
export async function saveSchedule(db: Database, queue: string, name: string, expression: string, job: ScheduledJob, options: ScheduleOptions): Promise<Schedule> {
  if (typeof name !== 'string' || !NAME.test(name)) throw new JobqError(`a schedule name is 1-64 characters, not ${JSON.stringify(name)}`, ExitCode.usage);
  if (typeof job?.kind !== 'string') throw new JobqError(`schedule ${JSON.stringify(name)}: a scheduled job needs a kind`, ExitCode.usage);
  const catchUp = options.catchUp ?? 'latest';
  if (catchUp !== 'latest' && catchUp !== 'all') throw new JobqError(`catchUp is "latest" or "all", not ${JSON.stringify(catchUp)}`, ExitCode.usage);
  const timeZone = options.timeZone ?? 'UTC';
  const cron = parseCron(expression, timeZone);
  const [, kind, payload, , , priority] = toJobRow({ kind: job.kind, payload: job.payload, ...(job.priority !== undefined && { priority: job.priority }) }, `schedule ${JSON.stringify(name)}`);
  const now = await serverNow(db);
  const next = cron.nextRun(now);
  if (next === null || next >= LAST_STORABLE) {
    const why = next === null ? 'it never fires after now' : `it first fires at ${next.toISOString()}, past ${LAST_STORABLE.toISOString()}, the last time the server's TIMESTAMP holds`;
    throw new JobqError(`cron ${JSON.stringify(expression)} in time zone ${timeZone} cannot be used: ${why}`, ExitCode.usage);
  }
  await db.query(scheduleSql.UPSERT_SCHEDULE_SQL, [queue, name, expression, timeZone, kind, payload, priority, catchUp, seconds(next)]);
  return { name, cron: expression, timeZone, catchUp, job: { kind: kind!, payload: job.payload ?? null, priority }, nextTick: next, lastTick: null, problem: null };
}

export async function removeSchedule(db: Database, queue: string, name: string): Promise<boolean> {
  return (await db.query<{ affectedRows: number }>(scheduleSql.DELETE_SCHEDULE_SQL, [queue, name])).affectedRows > 0;
}

export async function listSchedules(db: Database, queue: string): Promise<Schedule[]> {
  return (await db.query<ScheduleRow[]>(scheduleSql.LIST_SCHEDULES_SQL, [queue])).map((row) => {
    const read = readCron(row);
    return fromRow(row, 'problem' in read ? read.problem : null);
  });
}

/**
 * Enqueues the ticks of the queue's schedules that have come due, by the server's clock. Each
 * schedule's ticks are taken with a compare-and-set on its next tick, in the transaction that
 * inserts their jobs: however many workers run this at once, on however many machines, each tick
 * yields one job. A schedule whose cron or time zone cannot be read (a row written by hand or by
 * an older jobq) is skipped and named in `skipped`: one bad row must not stop the ticks of the
 * others, nor the workers. A schedule whose ticks end has its last tick enqueued, then never
 * comes due again (sql/schedules.ts, ENDED).
 */
export async function enqueueDueTicks(db: Database, table: QuotedIdentifier, queue: string, partitioned: boolean): Promise<{ enqueued: number; skipped: SkippedSchedule[] }> {
  const due = await db.query<Array<ScheduleRow & { now: string }>>(scheduleSql.DUE_SCHEDULES_SQL, [queue]);
  let enqueued = 0;
  const skipped: SkippedSchedule[] = [];
  for (const row of due) {
    const read = readCron(row);
    if ('problem' in read) {
      skipped.push({ name: row.name, reason: read.problem });
      continue;
    }
    const schedule = fromRow(row, null);
    const { ticks, next } = ticksToEnqueue(read.cron, schedule, new Date(Number(row.now) * 1000));
    if (ticks.length === 0) continue;
    const rows = ticks.map((tick): JobRow => [tickKey(queue, schedule.name, tick), row.kind, row.payload, '', '', row.priority, 0, null, null, null, null, null]);
    const nextSeconds = next === null ? String(scheduleSql.ENDED) : seconds(next);
    enqueued += await db.transaction(async (tx) => {
      const [taken] = (await tx.run([scheduleSql.TAKE_TICKS_SQL, [nextSeconds, seconds(ticks.at(-1)!), queue, schedule.name, row.next_tick]])) as [{ affectedRows: number }];
      if (taken.affectedRows === 0) return 0; // another worker took these ticks
      // A tick's key is new (its tick was just taken): a partitioned table's first try holds, and
      // the jobs are counted from the rows. Its kind is listed as enqueue lists kinds (stats()
      // counts the jobs of listed kinds).
      const insert: Statement[] = partitioned
        ? new KeyedInsert(table, KEYS_TABLE, NEW_JOBS_TABLE, queue, rows).insert(rows)
        : [[insertJobsSql(table, rows.length), insertValues(rows, UNMARKED)], countNewJobs({ queue, jobs: table, newJobs: NEW_JOBS_TABLE }, rows, true, UNMARKED)];
      await tx.commitWith([listKindsSql(1), [queue, row.kind]], ...insert);
      return rows.length;
    });
  }
  return { enqueued, skipped };
}

/**
 * The ticks due now (the latest, or all of them) and the first tick after them; null when there is
 * none that can be stored (the schedule has ended).
 */
function ticksToEnqueue(cron: Cron, schedule: Schedule, now: Date): { ticks: Date[]; next: Date | null } {
  const nextTick = schedule.nextTick!; // a due schedule has one
  if (schedule.catchUp === 'latest') {
    const [latest] = cron.previousRuns(1, new Date(now.getTime() + 1));
    return { ticks: latest === undefined || latest < nextTick ? [nextTick] : [latest], next: nextStorableTick(cron, now) };
  }
  const ticks: Date[] = [];
  let tick: Date | null = nextTick;
  while (tick !== null && tick <= now && ticks.length < MAX_CATCH_UP) {
    ticks.push(tick);
    tick = nextStorableTick(cron, tick);
  }
  return { ticks, next: tick };
}

/**
 * The job key of a tick: unique per queue, schedule and tick, and readable (`sched:<hash>:<ms>`),
 * within the 64 ASCII characters of job_key whatever the schedule's name.
 */
function tickKey(queue: string, name: string, tick: Date): string {
  const hash = createHash('sha1').update(`${queue}\0${name}`).digest('hex').slice(0, 20);
  return `sched:${hash}:${tick.getTime()}`;
}

async function serverNow(db: Database): Promise<Date> {
  const [row] = await db.query<Array<{ now: string }>>(scheduleSql.NOW_SQL);
  return new Date(Number(row!.now) * 1000);
}

const seconds = (date: Date) => (date.getTime() / 1000).toFixed(6);

function fromRow(row: ScheduleRow, problem: string | null): Schedule {
  return {
    name: row.name,
    cron: row.cron,
    timeZone: row.time_zone,
    catchUp: row.catch_up,
    job: { kind: row.kind, payload: row.payload === null ? null : JSON.parse(row.payload), priority: row.priority },
    nextTick: Number(row.next_tick) >= scheduleSql.ENDED ? null : new Date(Number(row.next_tick) * 1000),
    lastTick: row.last_tick === null ? null : new Date(Number(row.last_tick) * 1000),
    problem,
  };
}

/** A stored schedule's cron, or why it cannot be used: saveSchedule checks what it writes, but rows are also written by hand and by older versions. */
function readCron(row: ScheduleRow): { cron: Cron } | { problem: string } {
  try {
    return { cron: parseCron(row.cron, row.time_zone) };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}
