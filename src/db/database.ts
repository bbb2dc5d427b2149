import { setTimeout as sleep } from 'node:timers/promises';
import type mysql from 'mysql2/promise';
import type { ConnectionSettings, ServerAddress } from '../config/database-url.js';
import { connectToFirstAnswering, DatabaseClosedError, retryUntilConnected, syncWaitSql, type ConnectOptions, type Connected } from './connect.js';
import type { GaleraNode } from './galera.js';
import { isConnectionLost, isRetryableLockError } from './server-errors.js';
import type { ServerVersion } from './server-version.js';
import { AUTOCOMMIT_OFF, PipelinedTransaction, START_TRANSACTION, type Statement, type Transaction } from './transaction.js';

export interface DatabaseOptions extends ConnectOptions {
  /**
   * Keep going through outages: reconnect with capped exponential backoff and run the statement or
   * transaction again. Workers want this; one-shot commands (stats, setup-tables) fail at once.
   */
  reconnect?: boolean;
  /** Also wait for the server when the very first connection fails (worker processes started during an outage). */
  waitForServer?: boolean;
  /** With waitForServer: stop waiting when this aborts ({@link DatabaseClosedError}); a worker stopped before it got a connection. */
  stopWaiting?: AbortSignal;
}

/** Counters of what the connection went through, for summaries and the bench. */
export interface DatabaseCounters {
  deadlockRetries: number;
  lockWaitRetries: number;
  reconnects: number;
}

/**
 * Deadlocks and lock wait timeouts in a row are waited out and retried, at least this many times
 * and for at least LOCK_RETRY_MS, before one is an error: a group or a cluster that loses a member
 * refuses transactions for seconds (a worker on Group Replication died of 25 deadlocks in a row,
 * under a second, while a member was killed).
 */
const LOCK_RETRY_LIMIT = 25;
const LOCK_RETRY_MS = 30_000;

/**
 * One connection to the server, checked for SKIP LOCKED, that survives outages when asked to.
 *
 * Every statement jobq sends is safe to send twice (inserts carry a unique job key, deletes and
 * updates name their claim token), which is what makes "reconnect and run it again" correct even
 * when the connection died during a COMMIT whose outcome is unknown.
 */
export class Database {
  readonly counters: DatabaseCounters = { deadlockRetries: 0, lockWaitRetries: 0, reconnects: 0 };
  private closed = false;
  /** Transactions under way on this connection: a statement sent by query() meanwhile is part of one. */
  private transactionOpen = 0;
  /**
   * The end of the last transaction begun: a transaction waits for the one before it, since its
   * START TRANSACTION would commit that one halfway (an enqueue in one round trip while a cancel's
   * rows are locked, on the queue's one connection).
   */
  private lastTransaction: Promise<unknown> = Promise.resolve();
  /** The reconnect in progress: callers that fail meanwhile wait for it instead of starting another. */
  private reconnecting: Promise<void> | undefined;

  private connection: mysql.Connection;
  private connected: Connected;
  /** The session's causal reads (Galera) as jobq last set them: a retry after a conflict turns them on. */
  private causalReads: boolean;

  private constructor(
    private readonly options: DatabaseOptions,
    connected: Connected,
  ) {
    this.connected = connected;
    this.connection = connected.connection;
    this.causalReads = connected.causalReads;
  }

  /**
   * Connects to the first server of the URL that answers, refuses servers without SKIP LOCKED
   * and Galera nodes that are not synced, and prepares the session.
   */
  static async open(options: DatabaseOptions): Promise<Database> {
    const connected = options.waitForServer
      ? await retryUntilConnected(options, undefined, () => options.stopWaiting?.aborted === true)
      : await connectToFirstAnswering(options, { forRetry: false, afterLoss: false });
    return new Database(options, connected);
  }

  get settings(): ConnectionSettings {
    return this.options.settings;
  }

  /** The server's version, read when the connection was made. */
  get serverVersion(): ServerVersion {
    return this.connected.version;
  }

  /** The server of the URL this connection went to (after a reconnect, perhaps another). */
  get server(): ServerAddress {
    return this.connected.server;
  }

  /** Another connection to the server this one is on, with its settings; it does not reconnect. */
  openAnother(): Promise<Database> {
    return Database.open({ settings: { ...this.settings, servers: [this.server] } });
  }

  /** The Galera node's state when the connection was made; undefined on a server without Galera. */
  get galera(): GaleraNode | undefined {
    return this.connected.galera;
  }

  /**
   * Runs one statement in autocommit; `?` placeholders are filled from `values` by the driver,
   * never by hand. After a lost connection it reconnects (with `reconnect`) and sends it again.
   */
  async query<T = unknown>(sql: string, values?: unknown[]): Promise<T> {
    let firstLockError: number | undefined;
    for (let lockErrors = 0; ; ) {
      try {
        const [rows] = await this.connection.query(sql, values);
        return rows as T;
      } catch (error) {
        // In autocommit, a deadlock or a lost certification (Galera: a generator's INSERT while a
        // node died) undid the statement alone: send it again. Inside a transaction it undid the
        // whole transaction, which is transaction()'s to run again.
        if (this.transactionOpen === 0 && (await this.waitedOutLockError(error, ++lockErrors, (firstLockError ??= performance.now())))) continue;
        await this.recoverOrThrow(error);
      }
    }
  }

  /**
   * As query, once the transaction under way on this connection (if any) has ended: the statements
   * commit on their own, never as part of another caller's transaction. Several statements, `;`
   * apart, go in one round trip; their results come as an array.
   */
  async queryOutsideTransactions<T = unknown>(sql: string, values?: unknown[]): Promise<T> {
    await this.lastTransaction;
    return this.query<T>(sql, values);
  }

  /**
   * Runs `work` in a transaction and commits it. A deadlock or lock wait timeout rolls back and
   * runs `work` again (InnoDB has already undone it); a lost connection reconnects first. `work`
   * must therefore be safe to run again, as every jobq transaction is.
   */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    const run = this.lastTransaction.then(() => this.transactionAttempts(work));
    this.lastTransaction = run.catch(() => undefined);
    return run;
  }

  /**
   * On a Galera node a transaction runs with autocommit off, not after START TRANSACTION. A node
   * rolls back a transaction whose row locks another node's write set needs (a brute-force
   * abort), and on MariaDB 10.11.19 the statement under way still answered OK and those after it
   * in the same round trip ran in autocommit, each committed on its own: a claim's UPDATE
   * committed without the rest of its turn, the turn, finding fewer rows changed than it had
   * locked, ran again, and the jobs that UPDATE took were held by no worker until their lease
   * ran out (seen with SELECT @@in_transaction between a turn's statements; a limit of 2 per group
   * then held its group for the whole 60 s lease in about 1 contract run in 6). With autocommit
   * off those statements open a transaction of their own, which the turn's ROLLBACK undoes, or
   * its COMMIT commits after the turn's checks passed (docs/operations.md).
   */
  private async transactionAttempts<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    let firstLockError: number | undefined;
    let conflicted = false;
    for (let attempt = 1; ; attempt++) {
      const tx = new PipelinedTransaction(this.connection, this.causalReadsFor(conflicted), this.connected.galera === undefined ? START_TRANSACTION : AUTOCOMMIT_OFF);
      this.transactionOpen++;
      try {
        const result = await work(tx);
        await tx.finish();
        return result;
      } catch (error) {
        if (!isConnectionLost(error)) await tx.rollback();
        if (await this.waitedOutLockError(error, attempt, (firstLockError ??= performance.now()))) {
          conflicted = true;
          continue;
        }
        await this.recoverOrThrow(error);
      } finally {
        this.transactionOpen--;
      }
    }
  }

  /**
   * On a Galera node, a transaction run again after a conflict reads causally: it lost to a claim
   * that another node committed and this one may not have applied yet, and without waiting for it
   * the next attempt may read the same candidates and lose again (a CI worker, on a machine short
   * of memory, lost every attempt for 30 s and died of it). The first attempt of the next
   * transaction turns them back off, unless the connection reads causally anyway. The setting
   * rides in the transaction's first round trip: a statement more, never a round trip.
   */
  private causalReadsFor(retryAfterConflict: boolean): Statement[] {
    if (this.connected.galera === undefined) return [];
    const causal = retryAfterConflict || this.connected.causalReads;
    if (causal === this.causalReads) return [];
    this.causalReads = causal;
    return [[syncWaitSql(causal)]];
  }

  /**
   * A deadlock, lost certification or lock wait timeout, the `attempt`th in a row since the first
   * at `since` (the time is read only once an error comes, off the path that succeeds), and not
   * the last allowed: counted, and waited out a little (at most 500 ms).
   */
  private async waitedOutLockError(error: unknown, attempt: number, since: number): Promise<boolean> {
    if (!isRetryableLockError(error) || (attempt >= LOCK_RETRY_LIMIT && performance.now() - since >= LOCK_RETRY_MS)) return false;
    if ((error as { errno?: number }).errno === 1205) this.counters.lockWaitRetries++;
    else this.counters.deadlockRetries++;
    await sleep(Math.random() * Math.min(5 * attempt, 500));
    return true;
  }

  /** Drops the connection at once, without a word to the server (one that stopped answering). */
  destroy(): void {
    this.closed = true;
    this.connection.destroy();
  }

  /** Closes the connection; a reconnect loop in progress gives up with {@link DatabaseClosedError}. */
  async close(): Promise<void> {
    this.closed = true;
    await this.connection.end().catch(() => this.connection.destroy());
  }

  /** Returns when a fresh connection is in place, or rethrows `error` if it is not worth that. */
  private async recoverOrThrow(error: unknown): Promise<void> {
    if (this.closed) throw new DatabaseClosedError();
    if (!this.options.reconnect || !isConnectionLost(error)) throw error;
    this.reconnecting ??= (async () => {
      this.connection.destroy();
      const from = this.connected.server;
      const connected = await retryUntilConnected(this.options, error as Error, () => this.closed);
      if (this.closed) {
        // Closed (or destroyed) while the new connection was being made: it must not outlive that.
        connected.connection.destroy();
        throw new DatabaseClosedError();
      }
      this.connected = connected;
      this.connection = this.connected.connection;
      this.causalReads = connected.causalReads;
      const to = this.connected.server;
      if (to !== from) this.options.onConnectionEvent?.({ state: 'moved', error: error as Error, from: `${from.host}:${from.port}`, to: `${to.host}:${to.port}` });
      this.counters.reconnects++;
    })().finally(() => (this.reconnecting = undefined));
    await this.reconnecting;
  }
}

