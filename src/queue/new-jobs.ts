import { randomFillSync } from 'node:crypto';
import { ExitCode, JobqError } from '../errors.js';
import { DEFAULT_PRIORITY } from '../config/defaults.js';
import { unstorableJson } from './json-text.js';
import { MAX_PAYLOAD_BYTES, type UniqueOptions, type UntypedNewJob } from './types.js';
import { heldUniqueKey, type UniqueScope } from './sql/unique-jobs.js';
import { describeRange, inRange, OPTIONS } from '../config/options.js';
import { EVERY_KIND } from '../claim/sql/limits.js';

/**
 * One row for the INSERT, in the column order of `insertJobsSql`. A unique job has no job key
 * (null): its unique key, which job_key holds while it holds, makes sending it again safe, and
 * once the key no longer holds, a job sent again is one that could be queued anew.
 */
export type JobRow = [
  key: string | null,
  kind: string | null,
  payload: string | null,
  d: string,
  e: string,
  priority: number,
  delayMicroseconds: number,
  traceContext: string | null,
  group: string | null,
  uniqueKey: string | null,
  uniqueWhile: UniqueScope | null,
  timeoutMs: number | null,
];

/** The article's demo fields ride along only for `start-processing`'s generators. */
export type DemoJob = UntypedNewJob & { d?: string; e?: string };

const KEY = /^[\x21-\x7e]{1,64}$/;
/** The longest a job may be delayed (or put off by its handler). */
export const MAX_DELAY_SECONDS = 10 * 365 * 24 * 3600;
/** The priority column is a SMALLINT. */
export const PRIORITY_RANGE = { min: -32768, max: 32767 } as const;

/**
 * Checks a job and turns it into a row, or throws one line saying which job and what is wrong.
 * Payloads are refused, never truncated: not JSON-serialisable, or larger than 64 KiB.
 */
export function toJobRow(job: DemoJob, position: string): JobRow {
  const fail = (what: string): never => {
    throw new JobqError(`${position}: ${what}`, ExitCode.usage);
  };
  if (typeof job !== 'object' || job === null) fail('a job must be an object like {"kind": "email", "payload": {...}}');
  if (job.kind !== undefined && job.kind !== null) checkKind(job.kind, position);
  if (job.group !== undefined && job.group !== null) {
    if (typeof job.group !== 'string' || job.group.length === 0 || job.group.length > 64) fail(`group must be a string of 1-64 characters, not ${JSON.stringify(job.group)}`);
    if (job.kind === undefined || job.kind === null) fail('a job with a group needs a kind: groups share out the jobs of a kind');
  }
  if (job.key !== undefined && (typeof job.key !== 'string' || !KEY.test(job.key))) fail(`key must be 1-64 printable ASCII characters without spaces, not ${JSON.stringify(job.key)}`);
  let payload: string | null = null;
  if (job.payload !== undefined) {
    try {
      payload = JSON.stringify(job.payload) ?? null;
    } catch (error) {
      fail(`the payload cannot be written as JSON (${(error as Error).message})`);
    }
    if (payload === null) fail('the payload cannot be written as JSON (a function or a symbol?)');
    const bytes = Buffer.byteLength(payload as string);
    if (bytes > MAX_PAYLOAD_BYTES) fail(`the payload is ${bytes} bytes as JSON; the limit is ${MAX_PAYLOAD_BYTES}`);
    const problem = unstorableJson(payload as string);
    if (problem !== undefined) fail(`the payload cannot be stored: ${problem}`);
  }
  const priority = job.priority ?? DEFAULT_PRIORITY;
  if (!Number.isInteger(priority) || priority < PRIORITY_RANGE.min || priority > PRIORITY_RANGE.max) {
    fail(`priority must be a whole number from ${PRIORITY_RANGE.min} to ${PRIORITY_RANGE.max} (smaller runs first), not ${JSON.stringify(job.priority)}`);
  }
  const delaySeconds = job.runAfter !== undefined ? delayUntil(job.runAfter, fail) : (job.delaySeconds ?? 0);
  if (typeof delaySeconds !== 'number' || !Number.isFinite(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
    fail(`delay must be a number of seconds from 0 to ${MAX_DELAY_SECONDS}, not ${JSON.stringify(job.delaySeconds)}`);
  }
  if (job.key !== undefined && job.unique !== undefined) fail('give key or unique, not both: unique.key with while "stored" holds as key does');
  if (job.timeoutMs !== undefined && !inRange(OPTIONS.timeoutMs, job.timeoutMs)) fail(`timeoutMs must be ${describeRange(OPTIONS.timeoutMs)}, not ${JSON.stringify(job.timeoutMs)}`);
  const unique = job.unique === undefined ? undefined : uniqueOf(job.unique, fail);
  const row: JobRow = [
    job.key ?? (unique === undefined ? timeOrderedKey() : null),
    job.kind ?? null,
    payload,
    job.d ?? '',
    job.e ?? '',
    priority,
    Math.round(delaySeconds * 1e6),
    null,
    job.group ?? null,
    unique?.key ?? null,
    unique?.scope ?? null,
    job.timeoutMs ?? null,
  ];
  if (unique?.windowMicroseconds !== undefined) windows.set(row, unique.windowMicroseconds);
  return row;
}

/** The windows of rows whose unique key holds for a time, in µs: beside the row, as no column of the insert holds it. */
const windows = new WeakMap<JobRow, number>();

/** How long the unique key of a row made by toJobRow holds, in µs, if it holds for a time (unique.windowSeconds). */
export const windowOf = (row: JobRow): number | undefined => windows.get(row);

const UNIQUE_FIELDS = ['key', 'while', 'onConflict', 'windowSeconds'];
const UNIQUE_WHILE: readonly unknown[] = ['waiting', 'active', 'stored'];

/** A job's unique key, the scope its row stores (sql/unique-jobs.ts) and its window, or `fail` with what is wrong. */
function uniqueOf(unique: UniqueOptions, fail: (what: string) => never): { key: string; scope: UniqueScope; windowMicroseconds?: number } {
  if (typeof unique !== 'object' || unique === null) fail(`unique must be an object like {"key": "sync-acct-42"}, not ${JSON.stringify(unique)}`);
  const unknown = Object.keys(unique).find((field) => !UNIQUE_FIELDS.includes(field));
  if (unknown !== undefined) fail(`unique has no field ${JSON.stringify(unknown)}; it takes ${UNIQUE_FIELDS.map((f) => `"${f}"`).join(', ')}`);
  if (typeof unique.key !== 'string' || !KEY.test(unique.key)) fail(`unique.key must be 1-64 printable ASCII characters without spaces, not ${JSON.stringify(unique.key)}`);
  if (unique.while !== undefined && !UNIQUE_WHILE.includes(unique.while)) fail(`unique.while must be "waiting", "active" or "stored", not ${JSON.stringify(unique.while)}`);
  const onConflict = unique.onConflict ?? 'keep';
  if (onConflict !== 'keep' && onConflict !== 'replace') fail(`unique.onConflict must be "keep" or "replace", not ${JSON.stringify(unique.onConflict)}`);
  if (unique.windowSeconds !== undefined) {
    const seconds = unique.windowSeconds;
    if (typeof seconds !== 'number' || !(seconds > 0) || seconds > MAX_DELAY_SECONDS) fail(`unique.windowSeconds must be a number of seconds above 0, at most ${MAX_DELAY_SECONDS}, not ${JSON.stringify(seconds)}`);
    if (unique.while !== undefined || onConflict === 'replace') fail(`unique.windowSeconds holds the key for a time, whatever becomes of the job; leave out unique.${unique.while !== undefined ? 'while' : 'onConflict'}`);
    return { key: unique.key, scope: 'window', windowMicroseconds: Math.max(1, Math.round(seconds * 1e6)) };
  }
  if (onConflict === 'replace') {
    if ((unique.while ?? 'waiting') !== 'waiting') fail(`unique.onConflict "replace" holds the key while the job waits; leave out unique.while ${JSON.stringify(unique.while)}`);
    return { key: unique.key, scope: 'debounce' };
  }
  return { key: unique.key, scope: unique.while ?? 'active' };
}

/** A row's key as the unique job_key index holds it once the row is in: its unique key, if it has one (sql/unique-jobs.ts), else its key. */
export const indexKeyOf = (row: JobRow): string => (row[9] === null ? row[0]! : heldUniqueKey(row[9]));

/** A kind as stored: a string of 1-64 characters, not `*` (in limits, every kind). Throws one line otherwise. */
export function checkKind(kind: unknown, position?: string): string {
  const at = position === undefined ? '' : `${position}: `;
  if (typeof kind !== 'string' || kind.length === 0 || kind.length > 64) {
    throw new JobqError(`${at}kind must be a string of 1-64 characters, not ${JSON.stringify(kind)}`, ExitCode.usage);
  }
  if (kind === EVERY_KIND) throw new JobqError(`${at}"${EVERY_KIND}" is not a kind: it stands for every kind in limits; give a kind's name`, ExitCode.usage);
  return kind;
}

// Random bytes drawn 4 KiB at a time: one call into the system's generator per 512 keys.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/**
 * A job key that sorts by creation time: 12 hex digits of milliseconds, then 16 of randomness
 * (unique enough: 2^64 per millisecond). New keys land at the right-hand end of the unique index,
 * like the auto-increment ids, instead of all over it as random UUIDs do; docs/performance.md
 * has the figures.
 */
export function timeOrderedKey(): string {
  if (poolOffset + 8 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const random = pool.toString('hex', poolOffset, poolOffset + 8);
  poolOffset += 8;
  return Date.now().toString(16).padStart(12, '0') + random;
}

function delayUntil(runAfter: Date, fail: (what: string) => never): number {
  if (!(runAfter instanceof Date) || Number.isNaN(runAfter.getTime())) fail('runAfter must be a valid Date');
  return Math.max(0, (runAfter.getTime() - Date.now()) / 1000);
}
