import type { Database } from '../db/database.js';
import { isConnectionLost, isKillDenied, isNoSuchConnection } from '../db/server-errors.js';
import { WAKE_SQL, waitersSql } from './sql.js';

// A producer reads the process list at most this often while it rings: a read cost the server
// about 0.7 ms with 20 connections, too much for every enqueue.
const READ_WAITERS_EVERY_MS = 100;
// A waiter not seen in its wait statement for this long is rung no more: its worker found work
// at every turn for a second and stopped listening (doorbell.ts), or it is gone.
const FORGET_WAITER_AFTER_MS = 2000;
// After the server could not be reached, no ring is tried for this long: an enqueue that works
// again does not pay for a failing connect each time.
const PAUSE_AFTER_FAILURE_MS = 1000;
// A queue's close waits this long at most for the ring under way.
const CLOSE_WAIT_MS = 1000;

/**
 * A producer's side of the wake-ups (sql.ts): after due jobs are committed, it ends the wait
 * statement of each worker of the queue that waits on its server, on a connection of its own,
 * without holding up the enqueue. Rings asked for while one is under way are made once after it.
 * A ring that cannot be made is left out: the worker finds the jobs at its next poll.
 */
export class Ringer {
  /** The connections of waiting workers, and when each was last seen waiting. */
  private readonly waiters = new Map<number, number>();
  /** Waiters of other users, which this user may not wake. */
  private readonly denied = new Set<number>();
  private connection: Promise<Database> | undefined;
  /** The connection with the waiters read afresh, under way. */
  private readying: Promise<Database | undefined> | undefined;
  private readAt = -Infinity;
  private ringing: Promise<void> | undefined;
  private again = false;
  private pausedUntil = -Infinity;
  private warned = false;

  constructor(
    private readonly open: () => Promise<Database>,
    private readonly waitSql: string,
    /** Waiters this process wakes by a call (in-process.ts). */
    private readonly local: () => ReadonlySet<number>,
    /** Says once why some workers cannot be woken. */
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Due jobs are being enqueued: the connection, and the waiters when their list is old, are made
   * ready meanwhile, so that the ring after the commit is one round trip.
   */
  prepare(): void {
    if (performance.now() >= this.pausedUntil) void this.ready();
  }

  /** Due jobs were committed: wake the workers that wait for them. */
  ring(): void {
    if (this.ringing !== undefined) {
      this.again = true;
      return;
    }
    if (performance.now() < this.pausedUntil) return;
    this.ringing = this.rings().finally(() => (this.ringing = undefined));
  }

  /** Ends the ring under way (waiting for it a second at most) and the connection. */
  async close(): Promise<void> {
    this.pausedUntil = Infinity;
    if (this.ringing !== undefined) await Promise.race([this.ringing, new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
    const connection = this.connection;
    this.connection = undefined;
    await connection?.then((db) => db.close()).catch(() => undefined);
  }

  private async rings(): Promise<void> {
    do {
      this.again = false;
      const db = await this.ready();
      if (db === undefined) return;
      const local = this.local();
      try {
        await Promise.all([...this.waiters.keys()].filter((id) => !local.has(id)).map((id) => this.wake(db, id)));
      } catch (error) {
        this.failed(error);
      }
    } while (this.again && performance.now() >= this.pausedUntil);
  }

  /** The connection, with the waiters read at most READ_WAITERS_EVERY_MS ago; undefined when the server could not be asked. */
  private ready(): Promise<Database | undefined> {
    this.readying ??= (async () => {
      try {
        const db = await (this.connection ??= this.open());
        if (performance.now() - this.readAt >= READ_WAITERS_EVERY_MS) await this.readWaiters(db);
        return db;
      } catch (error) {
        this.failed(error);
        return undefined;
      } finally {
        this.readying = undefined;
      }
    })();
    return this.readying;
  }

  /** The connection is dropped and ringing paused for a while; a failure other than a lost connection is said once. */
  private failed(error: unknown): void {
    if (this.pausedUntil === Infinity) return; // closed: its connection went with it
    const connection = this.connection;
    this.connection = undefined;
    void connection?.then((db) => db.destroy()).catch(() => undefined);
    this.pausedUntil = performance.now() + PAUSE_AFTER_FAILURE_MS;
    if (!isConnectionLost(error)) this.warnOnce(`jobq cannot wake the workers of this queue (${error instanceof Error ? error.message : String(error)}); they find new jobs by polling`);
  }

  private async readWaiters(db: Database): Promise<void> {
    const known = [...this.waiters.keys()];
    this.readAt = performance.now();
    const rows = await db.query<Array<{ id: number; waiting: number }>>(waitersSql(db.serverVersion), [this.waitSql, this.waitSql, known.length > 0 ? known : [0]]);
    const now = performance.now();
    const present = new Set<number>();
    for (const row of rows) {
      const id = Number(row.id);
      present.add(id);
      if (Number(row.waiting) === 1 && !this.denied.has(id)) this.waiters.set(id, now);
    }
    for (const [id, seenAt] of this.waiters) if (!present.has(id) || now - seenAt > FORGET_WAITER_AFTER_MS) this.waiters.delete(id);
  }

  private async wake(db: Database, id: number): Promise<void> {
    try {
      await db.query(WAKE_SQL, [id]);
    } catch (error) {
      if (!isNoSuchConnection(error) && !isKillDenied(error)) throw error;
      this.waiters.delete(id);
      if (isKillDenied(error)) {
        this.denied.add(id);
        this.warnOnce(`jobq cannot wake a worker of this queue that connects as another user (${(error as Error).message}); it finds new jobs by polling`);
      }
    }
  }

  private warnOnce(message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.warn(message);
  }
}
