/**
 * Every failure jobq expects to meet carries an exit code, so the CLI can print one line and scripts
 * can tell "you typed it wrong" from "the server is down". The table is documented in docs/cli.md.
 */
export const ExitCode = {
  ok: 0,
  /** A bug or an error jobq has no words for; run with --verbose for the stack. */
  internal: 1,
  /** Bad flags or values: unknown option, out-of-range number, malformed URL, bad table name. */
  usage: 2,
  /** The server could not be reached or refused us: refused, timed out, access denied, no database. */
  connection: 3,
  /** The server is reachable but cannot run jobq: no SKIP LOCKED (MySQL < 8.0.1, MariaDB < 10.6), or MySQL < 8.0.17 (no utf8mb4_0900_bin). */
  unsupportedServer: 4,
  /** The jobs table is missing or has a shape jobq does not know. */
  schema: 5,
  /** jobq refused to destroy data: setup-tables --recreate on a non-empty table without --force. */
  refused: 6,
  /** A worker process crashed (it was restarted) or crashed too often (the run was stopped). */
  workerCrashed: 7,
  /** No such job: `jobq job ID` of a job never queued, or finished and deleted. */
  notFound: 8,
  /** The user pressed Ctrl-C twice: the run was abandoned without waiting for workers. */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** An error that is the user's to fix: its message is one line saying what was wrong and what to do. */
export class JobqError extends Error {
  readonly exitCode: ExitCodeValue;

  constructor(message: string, exitCode: ExitCodeValue, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JobqError';
    this.exitCode = exitCode;
  }
}

/**
 * A job was cancelled (`cancel`): the reason its running handler's `signal` fires with, and what
 * `queue.waitFor` rejects with.
 */
export class JobCancelled extends Error {
  constructor(readonly jobId: number) {
    super(`job ${jobId} was cancelled`);
    this.name = 'JobCancelled';
    // Where a cancel was noticed says nothing about the job: no stack.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** What `queue.waitFor` rejects with when the job failed for good: its last error. */
export class JobFailed extends Error {
  constructor(
    readonly jobId: number,
    readonly lastError: string | null,
  ) {
    super(`job ${jobId} failed: ${lastError ?? 'no error was kept'}`);
    this.name = 'JobFailed';
  }
}

/**
 * What a handler's `job.snooze(seconds)` returns, for it to throw if it likes: the run put its job
 * off, and the job goes back to the queue, due in `seconds`, without spending an attempt.
 */
export class JobSnoozed extends Error {
  constructor(readonly seconds: number) {
    super(`snoozed for ${seconds} s`);
    this.name = 'JobSnoozed';
  }
}
