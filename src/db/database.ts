import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import type { ConnectionSettings, ServerAddress } from '../config/database-url.js';
import { ExitCode, JobqError } from '../errors.js';
import { assertNodeUsable, GALERA_PROBE_SQL, galeraNodeFrom, NodeNotSyncedError, type GaleraNode } from './galera.js';
import type { ReplicaEvent } from './replica.js';
import { describeConnectError, isConnectionLost, isRetryableLockError } from './server-errors.js';
import { assertServerSupported, parseServerVersion, type ServerVersion } from './server-version.js';

/** A statement and the values for its `?` placeholders. */
export type Statement = readonly [sql: string, values?: readonly unknown[]];

/**
 * A transaction whose statements travel in as few round trips as possible: START TRANSACTION
 * rides along with the first batch of statements and COMMIT with the last.
 */
export interface Transaction {
  /** Sends the statements in one round trip; returns one result per statement. */
  run(...statements: Statement[]): Promise<unknown[]>;
  /** Sends the statements followed by COMMIT in one round trip. */
  commitWith(...statements: Statement[]): Promise<unknown[]>;
  /** As commitWith, then `read` after the COMMIT, still in the same round trip; returns its rows too. */
  commitThenRead(statements: Statement[], read: Statement): Promise<{ results: unknown[]; read: unknown }>;
}

class PipelinedTransaction implements Transaction {
  private started = false;
  private ended = false;

  constructor(private readonly connection: mysql.Connection) {}

  run(...statements: Statement[]): Promise<unknown[]> {
    return this.send(statements, false);
  }

  commitWith(...statements: Statement[]): Promise<unknown[]> {
    return this.send(statements, true);
  }

  async commitThenRead(statements: Statement[], read: Statement): Promise<{ results: unknown[]; read: unknown }> {
    const results = await this.send(statements, true, read);
    return { results: results.slice(0, -1), read: results.at(-1) };
  }

  /** Commits unless the work already did (or never sent anything). */
  async finish(): Promise<void> {
    if (this.started && !this.ended) await this.send([], true);
  }

  async rollback(): Promise<void> {
    if (this.started && !this.ended) await this.connection.query('ROLLBACK').catch(() => undefined);
    this.ended = true;
  }

  /** Sends the statements (and COMMIT, and a statement after it); returns the results of all but START TRANSACTION and COMMIT. */
  private async send(statements: Statement[], commit: boolean, afterCommit?: Statement): Promise<unknown[]> {
    if (this.ended) throw new Error('the transaction has ended');
    const opening: Statement[] = this.started ? [] : [['START TRANSACTION']];
    const all = [...opening, ...statements, ...(commit ? [['COMMIT'] as Statement] : []), ...(afterCommit === undefined ? [] : [afterCommit])];
    this.started = true;
    // Placeholders are positional over the joined text, so the values simply follow one another.
    const [results] = await this.connection.query(all.map(([sql]) => sql).join(';\n'), all.flatMap(([, values]) => values ?? []));
    if (commit) this.ended = true;
    const list = all.length === 1 ? [results] : (results as unknown[]);
    return [...list.slice(opening.length, opening.length + statements.length), ...(afterCommit === undefined ? [] : [list.at(-1)])];
  }
}

/** What {@link Database} reports while it keeps a connection alive. */
export type ConnectionEvent =
  | { state: 'lost'; error: Error }
  | { state: 'restored'; downMs: number }
  /** The connection was lost and the next server of the URL took over (a Galera node went away). */
  | { state: 'moved'; error: Error; from: string; to: string }
  /** Candidates come from the primary while the replica cannot be used, or from the replica again. */
  | ReplicaEvent;

/** What a connection event says in a line: the error that began an outage, how long it lasted, or where the connection went. */
export function connectionEventDetail(event: ConnectionEvent): string {
  switch (event.state) {
    case 'lost':
      return event.error.message;
    case 'restored':
      return `after ${(event.downMs / 1000).toFixed(1)} s`;
    case 'moved':
      return `from ${event.from} (${event.error.message}) to ${event.to}`;
    case 'replica-bypassed':
    case 'replica-used':
      return event.detail;
  }
}

export interface DatabaseOptions {
  settings: ConnectionSettings;
  /**
   * Keep going through outages: reconnect with capped exponential backoff and run the statement or
   * transaction again. Workers want this; one-shot commands (stats, setup-tables) fail at once.
   */
  reconnect?: boolean;
  /** Also wait for the server when the very first connection fails (worker processes started during an outage). */
  waitForServer?: boolean;
  /** With waitForServer: stop waiting when this aborts ({@link DatabaseClosedError}); a worker stopped before it got a connection. */
  stopWaiting?: AbortSignal;
  /** Connect without selecting the database, so that it can be created. */
  withoutDatabase?: boolean;
  onConnectionEvent?: (event: ConnectionEvent) => void;
}

/** Counters of what the connection went through, for summaries and the bench. */
export interface DatabaseCounters {
  deadlockRetries: number;
  lockWaitRetries: number;
  reconnects: number;
}

const RECONNECT_FIRST_DELAY_MS = 100;
const RECONNECT_MAX_DELAY_MS = 5_000;
const LOCK_RETRY_LIMIT = 25;

/** Thrown from a reconnect loop when {@link Database.close} was called meanwhile. */
export class DatabaseClosedError extends Error {
  constructor() {
    super('the database connection was closed');
  }
}

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
  /** The reconnect in progress: callers that fail meanwhile wait for it instead of starting another. */
  private reconnecting: Promise<void> | undefined;

  private connection: mysql.Connection;
  private connected: Connected;

  private constructor(
    private readonly options: DatabaseOptions,
    connected: Connected,
  ) {
    this.connected = connected;
    this.connection = connected.connection;
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

  /** The Galera node's state when the connection was made; undefined on a server without Galera. */
  get galera(): GaleraNode | undefined {
    return this.connected.galera;
  }

  /**
   * Runs one statement in autocommit; `?` placeholders are filled from `values` by the driver,
   * never by hand. After a lost connection it reconnects (with `reconnect`) and sends it again.
   */
  async query<T = unknown>(sql: string, values?: unknown[]): Promise<T> {
    for (let lockErrors = 0; ; ) {
      try {
        const [rows] = await this.connection.query(sql, values);
        return rows as T;
      } catch (error) {
        // In autocommit, a deadlock or a lost certification (Galera: a generator's INSERT while a
        // node died) undid the statement alone: send it again. Inside a transaction it undid the
        // whole transaction, which is transaction()'s to run again.
        if (this.transactionOpen === 0 && (await this.waitedOutLockError(error, ++lockErrors))) continue;
        await this.recoverOrThrow(error);
      }
    }
  }

  /**
   * Runs `work` in a transaction and commits it. A deadlock or lock wait timeout rolls back and
   * runs `work` again (InnoDB has already undone it); a lost connection reconnects first. `work`
   * must therefore be safe to run again, as every jobq transaction is.
   */
  async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const tx = new PipelinedTransaction(this.connection);
      this.transactionOpen++;
      try {
        const result = await work(tx);
        await tx.finish();
        return result;
      } catch (error) {
        if (!isConnectionLost(error)) await tx.rollback();
        if (await this.waitedOutLockError(error, attempt)) continue;
        await this.recoverOrThrow(error);
      } finally {
        this.transactionOpen--;
      }
    }
  }

  /** A deadlock or lock wait timeout, the `attempt`th in a row and not the last allowed: counted, and waited out a little. */
  private async waitedOutLockError(error: unknown, attempt: number): Promise<boolean> {
    if (!isRetryableLockError(error) || attempt >= LOCK_RETRY_LIMIT) return false;
    if ((error as { errno?: number }).errno === 1213) this.counters.deadlockRetries++;
    else this.counters.lockWaitRetries++;
    await sleep(Math.random() * 5 * attempt);
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
      const to = this.connected.server;
      if (to !== from) this.options.onConnectionEvent?.({ state: 'moved', error: error as Error, from: `${from.host}:${from.port}`, to: `${to.host}:${to.port}` });
      this.counters.reconnects++;
    })().finally(() => (this.reconnecting = undefined));
    await this.reconnecting;
  }
}

/** A connection made, and what was learnt of its server on the way. */
interface Connected {
  connection: mysql.Connection;
  version: ServerVersion;
  server: ServerAddress;
  galera: GaleraNode | undefined;
}

/** Connects with capped, jittered exponential backoff, announcing the outage once and its end once. */
async function retryUntilConnected(options: DatabaseOptions, lostWith: Error | undefined, isClosed: () => boolean): Promise<Connected> {
  const started = Date.now();
  let announced = false;
  for (let delay = RECONNECT_FIRST_DELAY_MS; ; delay = Math.min(delay * 2, RECONNECT_MAX_DELAY_MS)) {
    if (isClosed()) throw new DatabaseClosedError();
    try {
      const connected = await connectToFirstAnswering(options, { forRetry: true, afterLoss: lostWith !== undefined });
      if (announced) options.onConnectionEvent?.({ state: 'restored', downMs: Date.now() - started });
      return connected;
    } catch (error) {
      if (!isWorthWaitingFor(error)) throw error;
      if (!announced) {
        options.onConnectionEvent?.({ state: 'lost', error: lostWith ?? (error as Error) });
        announced = true;
      }
      await sleep(delay / 2 + Math.random() * (delay / 2));
    }
  }
}

/** A server that is down, or a Galera node that is not synced, may be back soon. */
const isWorthWaitingFor = (error: unknown) => isConnectionLost(error) || error instanceof NodeNotSyncedError;

/**
 * The first server of the URL that answers and can be used, in the URL's order. `afterLoss`: the
 * connection replaces one that was lost (see connectTo). `forRetry`: a failure worth waiting for
 * comes back raw, for the caller's retry loop; otherwise as one line per server tried.
 */
async function connectToFirstAnswering(options: DatabaseOptions, { forRetry, afterLoss }: { forRetry: boolean; afterLoss: boolean }): Promise<Connected> {
  const { servers } = options.settings;
  const failures: unknown[] = [];
  for (const server of servers) {
    try {
      return await connectTo(options, server, afterLoss);
    } catch (error) {
      if (!isWorthWaitingFor(error)) throw describeConnectError(error, options.settings, server);
      failures.push(error);
    }
  }
  if (forRetry) throw failures[failures.length - 1];
  const described = failures.map((error, i) => describeConnectError(error, options.settings, servers[i]!));
  if (described.length === 1) throw described[0];
  throw new JobqError(
    `no server in --database-url could be used: ${described.map((error) => (error as Error).message).join(' | ')}`,
    ExitCode.connection,
    { cause: failures[0] },
  );
}

async function connectTo(options: DatabaseOptions, server: ServerAddress, afterLoss: boolean): Promise<Connected> {
  const { settings } = options;
  const connection = await mysql.createConnection({
    host: server.host,
    port: server.port,
    user: settings.user,
    password: settings.password,
    ...(options.withoutDatabase ? {} : { database: settings.database }),
    ...(settings.socketPath !== undefined && { socketPath: settings.socketPath }),
    connectTimeout: 5_000,
    supportBigNumbers: true,
    dateStrings: true,
    timezone: 'Z',
    // Several statements per round trip (START TRANSACTION + first statement, last statement +
    // COMMIT): a claim cycle costs three round trips instead of six. Safe here because every
    // value goes through placeholders and the only identifier spliced in is validated.
    multipleStatements: true,
    // No stack trace captured for every statement: about 6 % of a busy consumer's CPU in a profile;
    // a failed statement's error is described in one line (and fully with --verbose) anyway.
    trace: false,
  });
  // A dropped connection is discovered by the next statement; without a listener mysql2 would
  // raise it as an uncaught 'error' event and end the process.
  connection.on('error', () => undefined);
  try {
    const [[versionRows, wsrepOn, wsrepStatus]] = (await connection.query(['SELECT VERSION() AS version', ...GALERA_PROBE_SQL].join(';\n'))) as unknown as [
      [Array<{ version: string }>, Array<{ Variable_name: string; Value: string }>, Array<{ Variable_name: string; Value: string }>],
    ];
    const version = parseServerVersion(String(versionRows[0]?.version));
    assertServerSupported(version);
    const galera = galeraNodeFrom(wsrepOn, wsrepStatus);
    assertNodeUsable(galera, settings.socketPath ?? `${server.host}:${server.port}`);
    // READ COMMITTED: the candidate query sees every committed job without the article's
    // commit-to-drop-the-read-view dance, and no statement takes gap locks, so the generators'
    // inserts never wait on (or deadlock with) the consumers' locking reads. Claims stay exclusive:
    // they rest on row locks and on the status re-checked by the locking read, not on isolation.
    // UTC: lease and age arithmetic happens in the server's clock, with no time zone in between.
    // Causal reads on a Galera node that replaces a lost connection: what this process committed
    // through the node that went away (a claim, say) is certified cluster-wide but may not be
    // applied here yet. A settle that ran before it would find no row with its claim token and
    // leave the jobs to their lease; so would the check of a COMMIT whose answer was lost.
    const causal = galera !== undefined && afterLoss ? '; SET SESSION wsrep_sync_wait = 1' : '';
    await connection.query(`SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; SET SESSION time_zone = '+00:00'${causal}`);
    return { connection, version, server, galera };
  } catch (error) {
    connection.destroy();
    throw error;
  }
}
