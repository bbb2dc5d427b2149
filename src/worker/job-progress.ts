import type { Database } from '../db/database.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import { SET_PROGRESS_SQL } from '../claim/sql/complete.js';

/** A job's progress is written at most this often, however often its handler reports it. */
export const PROGRESS_EVERY_MS = 250;

interface Report {
  json: string;
  token: Buffer;
}

/**
 * The progress reports of a worker's running jobs (`job.progress`): the latest of each job is
 * written every PROGRESS_EVERY_MS on the worker's upkeep connection (between its transactions, as
 * the cancel watch reads), guarded by its claim's token,
 * and the last one before the job is settled (`flush`). A write that fails is dropped: progress
 * is a hint, and the next report writes again.
 */
export class ProgressReports {
  private readonly pending = new Map<number, Report>();
  private readonly writing = new Map<number, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly table: QuotedIdentifier,
  ) {}

  /** Keeps `json` as the job's latest progress, to be written with the next round of writes. */
  report(id: number, token: Buffer, json: string): void {
    this.pending.set(id, { json, token });
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      for (const id of [...this.pending.keys()]) void this.write(id);
    }, PROGRESS_EVERY_MS).unref();
  }

  /** Whether the job has progress not written yet, or being written. */
  has(id: number): boolean {
    return this.pending.has(id) || this.writing.has(id);
  }

  /** Writes the job's latest progress now, if it has any not written, and waits for writes of it under way. */
  async flush(id: number): Promise<void> {
    await this.writing.get(id);
    await this.write(id);
  }

  private async write(id: number): Promise<void> {
    const report = this.pending.get(id);
    if (report === undefined) return;
    this.pending.delete(id);
    const write = this.db
      .queryOutsideTransactions(SET_PROGRESS_SQL(this.table), [report.json, id, report.token])
      .then(() => undefined)
      .catch(() => undefined)
      .finally(() => {
        if (this.writing.get(id) === write) this.writing.delete(id);
      });
    this.writing.set(id, write);
    await write;
  }
}
