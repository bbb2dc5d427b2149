import type { Database } from '../db/database.js';
import { isConnectionLost, isStatementInterrupted } from '../db/server-errors.js';
import { END_WAIT_CONNECTION_SQL, waitSessionSql, type WaitStatement } from './sql.js';

// A worker listens for rings until it has found work at every turn for this long: then producers
// stop ringing it (they forget a waiter not seen waiting for a while, ringer.ts) and a busy worker
// costs them nothing. Its next wait on an empty queue starts listening again.
const LISTEN_AFTER_IDLE_MS = 1000;
// A wait connection that could not be made, or was lost, is tried again at most this often.
const CONNECT_EVERY_MS = 1000;

/** What a doorbell tells its worker, besides the rings. */
export interface DoorbellEvents {
  /** The doorbell waits on this connection; returns what ends that (in-process.ts). */
  waitsOn(connectionId: number): () => void;
  /** Rings cannot reach this worker; it finds new jobs by polling. Said once. */
  unavailable(message: string): void;
}

interface WaitConnection {
  db: Database;
  id: number;
  forget: () => void;
}

/**
 * A worker's side of the wake-ups (sql.ts): while the worker is idle now and then, a connection
 * of its own sits in the queue's wait statement, which a producer's KILL QUERY ends. Each ring
 * wakes the worker; the statement is sent again at once.
 */
export class Doorbell {
  private connection: WaitConnection | undefined;
  private listening: Promise<void> | undefined;
  private idleAt = -Infinity;
  private connectedAt = -Infinity;
  private unavailable = false;
  private closed = false;
  private onRing: ((newest?: number) => void) | undefined;
  /** The newest job id a wait answered with: the next wait answers at once for newer ones. */
  private newest = 0;

  constructor(
    private readonly open: () => Promise<Database>,
    private readonly wait: WaitStatement,
    private readonly events: DoorbellEvents,
  ) {}

  /**
   * Calls `wake` at each ring, and with the newest job id when a wait found jobs newer than the
   * last it was told of (which may be jobs the worker's turns took already); returns what ends that.
   */
  subscribe(wake: (newest?: number) => void): () => void {
    this.onRing = wake;
    return () => (this.onRing = undefined);
  }

  /** The worker waits on an empty queue: listen for rings, from now until it has been busy a while. */
  idle(): void {
    this.idleAt = performance.now();
    if (this.listening !== undefined || this.unavailable || this.closed) return;
    this.listening = this.listen().finally(() => (this.listening = undefined));
  }

  /**
   * Stops listening: the wait connection is dropped (its wait is not waited for: a dropped
   * connection's statement never answers), and ended in the server by a statement queued on `via`,
   * which may be closing (a wait left alone would run its minute out). Only when `via` is on the
   * same server: connection ids are a server's own, and `via` may have moved to another node.
   */
  close(via: Database): void {
    this.closed = true;
    const connection = this.connection;
    if (connection === undefined) return;
    const { server } = connection.db;
    this.drop(connection);
    if (via.server.host === server.host && via.server.port === server.port) void via.query(END_WAIT_CONNECTION_SQL, [connection.id]).catch(() => undefined);
  }

  private async listen(): Promise<void> {
    while (!this.closed && performance.now() - this.idleAt < LISTEN_AFTER_IDLE_MS) {
      const connection = this.connection ?? (await this.connect());
      if (connection === undefined) return;
      const ended = await this.waited(connection);
      if (ended === 'newer') this.onRing?.(this.newest);
      else if (ended === 'rang') this.onRing?.();
    }
  }

  /** Waits in the wait statement until it ends: rung, answered at once for newer jobs, or run out (the connection may have gone). */
  private async waited(connection: WaitConnection): Promise<'rang' | 'newer' | 'ran-out'> {
    try {
      const [, [row]] = await connection.db.query<[unknown, Array<{ newest: number | string | null } & Record<string, unknown>>]>(this.wait.sql, [this.newest]);
      if (row !== undefined && row.newest !== null) {
        this.newest = Number(row.newest);
        return 'newer';
      }
      // MySQL: SLEEP returns 1 when a KILL QUERY ends it, 0 when it ran its time.
      return Object.values(row ?? {})[1] === 1 ? 'rang' : 'ran-out';
    } catch (error) {
      if (isStatementInterrupted(error)) return 'rang';
      this.drop(connection);
      if (!isConnectionLost(error) && !this.closed) this.fail(error);
      return 'ran-out';
    }
  }

  private async connect(): Promise<WaitConnection | undefined> {
    if (this.closed || performance.now() - this.connectedAt < CONNECT_EVERY_MS) return undefined;
    this.connectedAt = performance.now();
    let db: Database;
    try {
      db = await this.open();
    } catch {
      return undefined; // the server is away: the worker's own connections wait for it
    }
    try {
      const [, [session]] = await db.query<[unknown, Array<{ id: number }>]>(waitSessionSql(db.serverVersion));
      if (this.closed) {
        db.destroy();
        return undefined;
      }
      const id = Number(session!.id);
      this.connection = { db, id, forget: this.events.waitsOn(id) };
      return this.connection;
    } catch (error) {
      db.destroy();
      if (!isConnectionLost(error) && !this.closed) this.fail(error);
      return undefined;
    }
  }

  private drop(connection: WaitConnection): void {
    connection.forget();
    connection.db.destroy();
    if (this.connection === connection) this.connection = undefined;
  }

  private fail(error: unknown): void {
    this.unavailable = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.events.unavailable(`this worker cannot be woken by enqueues in other processes (${reason}); it finds their jobs by polling`);
  }
}
