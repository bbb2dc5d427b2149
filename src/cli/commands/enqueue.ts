import { fstatSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { ExitCode, JobqError } from '../../errors.js';
import type { JobQueue } from '../../job-queue.js';
import { alteredNumber } from '../../queue/json-text.js';
import { DEFAULT_PRIORITY } from '../../config/defaults.js';
import { checkKind, PRIORITY_RANGE, toJobRow } from '../../queue/new-jobs.js';
import type { EnqueueResult, NewJob, UniqueOptions } from '../../queue/types.js';
import { addConnectionOptions, numberIn, type ConnectionOptions } from '../options.js';
import { parseDuration } from '../../config/duration.js';
import { ProgressLine } from '../progress.js';
import { withReadyQueue } from '../ready-queue.js';

interface EnqueueOptions extends ConnectionOptions {
  kind?: string;
  payload?: string;
  delay?: number;
  priority?: number;
  key?: string;
  group?: string;
  timeout?: number;
  uniqueKey?: string;
  uniqueWhile?: 'waiting' | 'active' | 'stored';
  uniqueWindow?: number;
  replace?: boolean;
  stdin?: boolean;
}

/** The fields a --stdin line may have; any other is refused (a misspelt "delya" must not vanish). */
const LINE_FIELDS = ['kind', 'payload', 'delay', 'priority', 'key', 'group', 'timeout', 'unique'] as const;
type LineFields = Partial<{ kind: string; payload: unknown; delay: number; priority: number; key: string; group: string; timeout: string | number; unique: UniqueOptions }>;

const LINES_PER_CHUNK = 1000;

export function registerEnqueue(program: Command): void {
  addConnectionOptions(program.command('enqueue'))
    .description('queue one job from flags, or many from standard input as JSON lines')
    .option('--kind <kind>', 'the job kind (with --stdin: for lines that name none)')
    .option('--payload <json>', 'the job payload, any JSON value up to 64 KiB')
    .addOption(new Option('--delay <seconds>', 'not handed out before this many seconds from now').argParser(numberIn(0, 315_360_000, false)))
    .addOption(
      new Option('--priority <n>', 'smaller runs first among due jobs (with --stdin: for lines that give none)')
        .argParser(numberIn(PRIORITY_RANGE.min, PRIORITY_RANGE.max))
        .default(DEFAULT_PRIORITY),
    )
    .option('--key <key>', 'idempotency key: a job with this key is queued once, however often sent')
    .option('--group <group>', 'the job\'s group (a tenant, an account): claims share the kind between its groups (with --stdin: for lines that name none)')
    .addOption(new Option('--timeout <duration>', 'a run of the job may take this long (500ms, 30s, 5m), whatever the worker allows (with --stdin: for lines that give none)').argParser(durationArgument('--timeout', 1000)))
    .option('--unique-key <key>', 'unique job: while a job holds this key, no second one is queued')
    .addOption(new Option('--unique-while <state>', 'while the unique key holds: until the job is first taken, until it is done or failed, or while its row exists').choices(['waiting', 'active', 'stored']))
    .addOption(new Option('--unique-window <duration>', 'instead of --unique-while: the unique key holds this long (30s, 1h, 1d) from the enqueue of the job that took it, whatever becomes of the job').argParser(durationArgument('--unique-window')))
    .option('--replace', 'debounce: the job waiting with the unique key takes this payload and delay (a job already running is left to run, and this one queued)')
    .option('--stdin', `read jobs from standard input, one JSON object per line with the fields ${LINE_FIELDS.map((f) => `"${f}"`).join(', ')}`)
    .addHelpText(
      'after',
      `
Examples:
  jobq enqueue --kind email --payload '{"to": "ann@example.com"}'
  jobq enqueue --kind report --payload '{"day": "2026-11-21"}' --delay 3600
  jobq enqueue --kind invoice --payload '{"order": 42}' --priority -10
  jobq enqueue --kind import --payload '{"rows": 100}' --group acct-42
  jobq enqueue --kind sync --payload '{"account": 42}' --unique-key sync-42
  jobq enqueue --kind reindex --payload '{"doc": 7}' --unique-key reindex-7 --replace --delay 30
  jq -c '.[]' jobs.json | jobq enqueue --stdin

With --stdin, jobs go in chunks of ${LINES_PER_CHUNK} lines, each chunk all or nothing. A bad line stops the
input there (not JSON, a field it does not know, a bad value): the chunks before it are queued,
nothing from its chunk on is written.`,
    )
    .action(async (options: EnqueueOptions) => {
      if (options.stdin && (options.payload !== undefined || options.key !== undefined || options.uniqueKey !== undefined)) {
        throw new JobqError('--stdin takes payloads and keys from its lines; leave out --payload, --key and --unique-key', ExitCode.usage);
      }
      const uniqueFlag = options.replace ? '--replace' : options.uniqueWhile !== undefined ? '--unique-while' : options.uniqueWindow !== undefined ? '--unique-window' : undefined;
      if (options.uniqueKey === undefined && uniqueFlag !== undefined) {
        throw new JobqError(`${uniqueFlag} needs --unique-key: it says what a job's unique key does`, ExitCode.usage);
      }
      if (options.kind !== undefined) checkKind(notMangled(options.kind, '--kind'), '--kind');
      if (options.group !== undefined) notMangled(options.group, '--group');
      const single = options.stdin ? undefined : jobFromFlags(options);
      await withReadyQueue(options, async (queue, out) => {
        out.line(describe(single === undefined ? await enqueueLines(queue, options) : await enqueueOne(queue, single)));
      });
    });
}

/** A duration (`30s`, `500ms`, or seconds) in whole milliseconds, as a job's timeoutMs takes it (checked with the job). */
function durationMs(value: string | number, what: string): number {
  return Math.round(parseDuration(value, what) * 1000);
}

/** A commander parser for a duration flag, in seconds, or in `unit`ths of one (1000: ms). */
function durationArgument(flag: string, unit = 1): (value: string) => number {
  return (value) => {
    try {
      return Math.round(parseDuration(value, flag) * unit * 1e6) / 1e6;
    } catch (error) {
      throw new InvalidArgumentError(`${(error as Error).message}.`);
    }
  };
}

function jobFromFlags(options: EnqueueOptions): NewJob {
  const job: NewJob = {
    ...(options.kind !== undefined && { kind: options.kind }),
    ...(options.delay !== undefined && { delaySeconds: options.delay }),
    ...(options.priority !== undefined && { priority: options.priority }),
    ...(options.key !== undefined && { key: options.key }),
    ...(options.group !== undefined && { group: options.group }),
    ...(options.timeout !== undefined && { timeoutMs: options.timeout }),
    ...(options.uniqueKey !== undefined && {
      unique: {
        key: options.uniqueKey,
        ...(options.uniqueWhile !== undefined && { while: options.uniqueWhile }),
        ...(options.uniqueWindow !== undefined && { windowSeconds: options.uniqueWindow }),
        ...(options.replace && { onConflict: 'replace' as const }),
      },
    }),
  };
  if (options.payload !== undefined) {
    try {
      job.payload = JSON.parse(notMangled(options.payload, '--payload'));
    } catch (error) {
      throw new JobqError(`--payload is not JSON (${(error as Error).message}); quote it, e.g. --payload '{"to": "ann"}'`, ExitCode.usage);
    }
    const problem = alteredNumber(options.payload);
    if (problem !== undefined) throw new JobqError(`--payload cannot be stored as given: ${problem}`, ExitCode.usage);
  }
  toJobRow(job, 'the job'); // refuse a bad job before connecting
  return job;
}

/**
 * Node reads the command line as UTF-8 and puts U+FFFD where bytes are not: such a value would be
 * stored changed. Refused, with the flag named.
 */
function notMangled(value: string, flag: string): string {
  if (value.includes('\ufffd')) throw new JobqError(`${flag} holds bytes that are not UTF-8 (or a U+FFFD); give it as UTF-8 text`, ExitCode.usage);
  return value;
}

/**
 * Jobs sent, and those of them that added nothing: they repeated the key or unique key of a line
 * before them, or named one a job held already (as read just before their chunk went); and
 * whether they replaced a waiting job's payload instead (--replace).
 */
type Sent = EnqueueResult & { repeatedKeys: number; keysHeld: number; replaced: boolean };

/** The key a job holds, and the unique key: prefixed apart, as they are held apart. */
const keysOf = (job: NewJob): string[] => [...(job.key === undefined ? [] : [`key ${job.key}`]), ...(job.unique === undefined ? [] : [`unique ${job.unique.key}`])];

/** Of these keysOf, those a job holds now. */
async function heldKeys(queue: JobQueue, keys: readonly string[]): Promise<Set<string>> {
  const of = (prefix: string) => keys.filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length));
  const [plain, unique] = await Promise.all([queue.jobIdsByKey(of('key ')), queue.jobIdsByUniqueKey(of('unique '))]);
  return new Set([...[...plain.keys()].map((key) => `key ${key}`), ...[...unique.keys()].map((key) => `unique ${key}`)]);
}

/** One job from the flags; with a key or unique key, whether a job held it already is read first. */
async function enqueueOne(queue: JobQueue, job: NewJob): Promise<Sent> {
  const held = (await heldKeys(queue, keysOf(job))).size > 0 ? 1 : 0;
  return { ...(await queue.enqueueMany([job])), repeatedKeys: 0, keysHeld: held, replaced: held === 1 && job.unique?.onConflict === 'replace' };
}

/** Reads JSON lines into chunks; each chunk is checked whole, then queued in one go. */
async function enqueueLines(queue: JobQueue, options: EnqueueOptions): Promise<Sent> {
  const total: Sent = { count: 0, firstId: null, lastId: null, repeatedKeys: 0, keysHeld: 0, replaced: false };
  const keys = new Set<string>();
  let chunkRepeats = 0;
  /** Keys (keysOf) first seen in this chunk's lines, and the lines that named one of them; the lines that repeated one. */
  let chunkKeys: string[] = [];
  let keyedLines: string[][] = [];
  let chunk: NewJob[] = [];
  let chunkStart = 1;
  let lineNumber = 0;
  const progress = new ProgressLine('queued');
  // Input from a file (`< jobs.jsonl`) has a size: what is left is estimated from the bytes read.
  const input = fstatSync(0);
  const inputBytes = input.isFile() ? input.size : undefined;
  let bytesRead = 0;
  const left = () => (inputBytes === undefined || bytesRead === 0 ? undefined : { count: ((inputBytes - bytesRead) * lineNumber) / bytesRead, about: true });
  const flush = async () => {
    const held = await heldKeys(queue, chunkKeys);
    total.keysHeld += keyedLines.filter((keys) => keys.some((key) => held.has(key))).length;
    chunkKeys = [];
    keyedLines = [];
    const result = await queue.enqueueMany(chunk);
    total.count += result.count;
    total.repeatedKeys += chunkRepeats;
    chunkRepeats = 0;
    total.firstId = total.firstId ?? result.firstId;
    total.lastId = result.lastId ?? total.lastId;
    chunk = [];
    chunkStart = lineNumber + 1;
    progress.update(total.count, left());
  };
  /** Stops the input at a bad line (`where` ''), or at a chunk the server refused: what was queued before it stays, and is said. */
  const stopAt = (error: unknown, where = ''): never => {
    progress.end();
    const before = total.count === 0 ? 'nothing was queued' : `${describe(total)} from the lines before ${chunkStart}`;
    const exitCode = error instanceof JobqError ? error.exitCode : where === '' ? ExitCode.usage : ExitCode.internal;
    throw new JobqError(`${where}${(error as Error).message}; ${before}; nothing from line ${chunkStart} on was written`, exitCode, { cause: error });
  };
  const flushOrStop = () => flush().catch((error: unknown) => stopAt(error, `lines ${chunkStart}-${lineNumber}: `));
  for await (const line of utf8Lines(process.stdin)) {
    lineNumber++;
    bytesRead = line.bytesRead;
    if (line.text?.trim() === '') continue;
    try {
      if (line.text === undefined) throw new Error(`line ${lineNumber}: bytes that are not UTF-8; send UTF-8 text`);
      const job = jobFromLine(line.text, lineNumber, options);
      const named = keysOf(job);
      if (named.some((key) => keys.has(key))) chunkRepeats++;
      else if (named.length > 0) {
        for (const key of named) keys.add(key);
        chunkKeys.push(...named);
        keyedLines.push(named);
      }
      chunk.push(job);
    } catch (error) {
      stopAt(error);
    }
    if (chunk.length === LINES_PER_CHUNK) await flushOrStop();
  }
  if (chunk.length > 0) await flushOrStop();
  progress.end();
  return total;
}

/**
 * The lines of a byte stream, each decoded as strict UTF-8: undefined text for a line that is not
 * (rather than U+FFFD in it); with the bytes of the stream up to the line's end.
 */
async function* utf8Lines(input: AsyncIterable<Buffer>): AsyncGenerator<{ text: string | undefined; bytesRead: number }> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (bytes: Buffer) => {
    try {
      return decoder.decode(bytes).replace(/\r$/, '');
    } catch {
      return undefined;
    }
  };
  let rest = Buffer.alloc(0);
  let bytesRead = 0;
  for await (const chunk of input) {
    let bytes = Buffer.concat([rest, chunk]);
    for (let end = bytes.indexOf(0x0a); end !== -1; end = bytes.indexOf(0x0a)) {
      bytesRead += end + 1;
      yield { text: decode(bytes.subarray(0, end)), bytesRead };
      bytes = bytes.subarray(end + 1);
    }
    rest = bytes;
  }
  if (rest.length > 0) yield { text: decode(rest), bytesRead: bytesRead + rest.length };
}

function jobFromLine(line: string, lineNumber: number, options: EnqueueOptions): NewJob {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new Error(`line ${lineNumber}: not JSON (${(error as Error).message})`);
  }
  const problem = alteredNumber(line);
  if (problem !== undefined) throw new Error(`line ${lineNumber}: cannot be stored as given: ${problem}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`line ${lineNumber}: expected an object like {"kind": "email", "payload": {...}}`);
  }
  const unknown = Object.keys(value).find((field) => !(LINE_FIELDS as readonly string[]).includes(field));
  if (unknown !== undefined) {
    throw new Error(`line ${lineNumber}: unknown field ${JSON.stringify(unknown)}; a line may have ${LINE_FIELDS.map((f) => `"${f}"`).join(', ')}`);
  }
  const fields = value as LineFields;
  const job: NewJob = {
    ...(fields.payload !== undefined && { payload: fields.payload }),
    ...((fields.kind ?? options.kind) !== undefined && { kind: fields.kind ?? options.kind }),
    ...((fields.delay ?? options.delay) !== undefined && { delaySeconds: fields.delay ?? options.delay }),
    ...((fields.priority ?? options.priority) !== undefined && { priority: fields.priority ?? options.priority }),
    ...(fields.key !== undefined && { key: fields.key }),
    ...((fields.group ?? options.group) !== undefined && { group: fields.group ?? options.group }),
    ...(fields.unique !== undefined && { unique: fields.unique }),
  };
  const timeoutMs = fields.timeout === undefined ? options.timeout : durationMs(fields.timeout, `line ${lineNumber}: timeout`);
  if (timeoutMs !== undefined) job.timeoutMs = timeoutMs;
  toJobRow(job, `line ${lineNumber}`);
  return job;
}

function describe(result: Sent): string {
  const count = result.count - result.repeatedKeys - result.keysHeld;
  const jobs = `${count} job${count === 1 ? '' : 's'}`;
  const ids = result.firstId === null || count === 0 ? '' : result.firstId === result.lastId ? ` (id ${result.firstId})` : ` (ids ${result.firstId}..${result.lastId})`;
  const lines = (n: number) => `${n} line${n === 1 ? '' : 's'}`;
  if (result.replaced) return `replaced the payload and run time of job ${result.firstId}, which waits with that unique key`;
  const repeated = result.repeatedKeys === 0 ? '' : `; ${lines(result.repeatedKeys)} repeated the key of an earlier line, which is queued once`;
  const held = result.keysHeld === 0 ? '' : `; ${result.keysHeld === 1 && result.count === 1 ? `its key was held already, by job ${result.firstId}` : `${lines(result.keysHeld)} named a key a job held already`}`;
  return `queued ${jobs}${ids}${repeated}${held}`;
}
