import type { Database } from '../db/database.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import { JobCancelled, JobFailed, JobqError, ExitCode } from '../errors.js';
import type { JobStatus } from './types.js';
import * as jobSql from './sql/job-info.js';

/** An error of one of the job's attempts, as `errors` keeps it (the latest 20). */
export interface JobError {
  attempt: number;
  at: Date;
  message: string;
  /** The first frames of its stack, the handler's code (jobq's own frames left out); null when it had none. */
  stack: string | null;
}

/** One job, whole: what {@link readJob} returns. */
export interface JobInfo {
  id: number;
  kind: string | null;
  group: string | null;
  payload: unknown;
  status: JobStatus;
  priority: number;
  /** Runs its handler began (handed back and snoozed runs given back); see ClaimedJob.attempts. */
  attempts: number;
  snoozes: number;
  /** Leases of it that ran out without their worker settling it, in a row. */
  leaseExpiries: number;
  /** Its job key (`key` at the enqueue), and its unique key and while that holds (`unique`); null for none. */
  key: string | null;
  uniqueKey: string | null;
  uniqueWhile: string | null;
  /** Its own timeout (`timeoutMs` at the enqueue), or null. */
  timeoutMs: number | null;
  /** The errors of its latest attempts, oldest first, and the last one's message. */
  errors: JobError[];
  lastError: string | null;
  /** What its handler returned, kept with the done job (`keepResults`, `keepDone`); undefined when nothing was kept. */
  result: unknown;
  /** What its handler last reported (`job.progress`); null when it has not. */
  progress: unknown;
  createdAt: Date;
  /** Waiting: when it is due. Running: when its lease ends. Done, failed, cancelled: when it ended. */
  runAfter: Date;
  /** Running: the process that holds it (its `ownerId`), and the seconds its lease has left (negative: ran out). */
  ownerId: number | null;
  leaseLeftSeconds: number | null;
  /** When `cancel` asked for it to end, or null. */
  cancelRequestedAt: Date | null;
}

interface JobRow {
  id: number;
  kind: string | null;
  job_group: string | null;
  payload: string | null;
  status: JobStatus;
  priority: number;
  attempts: number;
  snoozes: number;
  lease_expiries: number;
  given_key: string | null;
  unique_key: string | null;
  unique_while: string | null;
  timeout_ms: number | null;
  last_error: string | null;
  errors: string | null;
  result: string | null;
  progress: string | null;
  owner_id: number;
  created_at: string;
  run_after: string;
  cancel_requested_at: string | null;
  run_after_in_us: number;
}

const dateOf = (unixSeconds: string) => new Date(Number(unixSeconds) * 1000);
const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/** The job with this id, or undefined when there is none (never queued, or finished and deleted). */
export async function readJob(db: Database, table: QuotedIdentifier, id: number): Promise<JobInfo | undefined> {
  checkJobId(id);
  const [row] = await db.query<JobRow[]>(jobSql.READ_JOB_SQL(table), [id]);
  if (row === undefined) return undefined;
  const claimed = row.status === 'claimed';
  const errors = (parsed(row.errors) ?? []) as Array<{ attempt: number; at: string; message: string; stack: string | null }>;
  return {
    id: Number(row.id),
    kind: row.kind,
    group: row.job_group,
    payload: parsed(row.payload),
    status: row.status,
    priority: row.priority,
    attempts: row.attempts,
    snoozes: row.snoozes,
    leaseExpiries: row.lease_expiries,
    key: row.given_key,
    uniqueKey: row.unique_key,
    uniqueWhile: row.unique_while,
    timeoutMs: row.timeout_ms,
    errors: errors.map((error) => ({ ...error, at: new Date(error.at) })),
    lastError: row.last_error,
    result: row.result === null ? undefined : JSON.parse(row.result),
    progress: parsed(row.progress),
    createdAt: dateOf(row.created_at),
    runAfter: dateOf(row.run_after),
    ownerId: claimed && row.owner_id !== 0 ? row.owner_id : null,
    leaseLeftSeconds: claimed ? Number(row.run_after_in_us) / 1e6 : null,
    cancelRequestedAt: row.cancel_requested_at === null ? null : dateOf(row.cancel_requested_at),
  };
}

export interface WaitOptions {
  /** Give up after this many milliseconds (rejects with a JobqError); default: wait as long as it takes. */
  timeoutMs?: number;
  /** How often the job is read; default 200 ms. */
  pollMs?: number;
}

// A job not found at the first read may not be visible yet (an insert that commits just now, a
// replica behind): it is looked for this long before waitFor says there is no such job.
const UNSEEN_GRACE_MS = 1000;

/**
 * Waits until the job ends, reading it by primary key every `pollMs`: resolves with its result
 * (undefined when none was kept) when it is done, or when it was seen and is gone (completed and
 * deleted); rejects with JobFailed when it failed for good, JobCancelled when it was cancelled,
 * and a JobqError when there is no such job or `timeoutMs` passed.
 */
export async function waitForJob(db: Database, table: QuotedIdentifier, id: number, options: WaitOptions = {}): Promise<unknown> {
  const started = performance.now();
  const pollMs = options.pollMs ?? 200;
  let seen = false;
  for (;;) {
    const job = await readJob(db, table, id);
    if (job === undefined) {
      if (seen) return undefined; // completed and deleted: its result was not kept
      if (performance.now() - started > UNSEEN_GRACE_MS) {
        throw new JobqError(`no job ${id}: never queued, or done and deleted before waitFor saw it (keepResults keeps jobs that return a value)`, ExitCode.notFound);
      }
    } else {
      seen = true;
      if (job.status === 'done') return job.result;
      if (job.status === 'failed') throw new JobFailed(id, job.lastError);
      if (job.status === 'cancelled') throw new JobCancelled(id);
    }
    if (options.timeoutMs !== undefined && performance.now() - started + pollMs > options.timeoutMs) {
      throw new JobqError(`job ${id} did not end within ${options.timeoutMs} ms (it is ${job?.status ?? 'not visible yet'})`, ExitCode.usage);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** A job id, checked: a one-line error for anything but a whole number from 1. */
export function checkJobId(id: unknown): asserts id is number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw new JobqError(`a job id is a whole number from 1, not ${JSON.stringify(id)}`, ExitCode.usage);
}
