import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import type { ConnectionSettings, ServerAddress } from '../config/database-url.js';
import { ExitCode, JobqError } from '../errors.js';
import type { ConnectionEvent } from './connection-events.js';
import { assertNodeUsable, GALERA_PROBE_SQL, galeraNodeFrom, type GaleraNode } from './galera.js';
import { describeConnectError, isConnectionLost, ServerNotUsableError, ServerReadOnlyError } from './server-errors.js';
import { assertServerSupported, parseServerVersion, type ServerVersion } from './server-version.js';

// Connecting: to the first usable server of the URL, checked and with the session prepared, and
// again and again with backoff through an outage.

/** How a connection is made. */
export interface ConnectOptions {
  settings: ConnectionSettings;
  /** Connect without selecting the database, so that it can be created. */
  withoutDatabase?: boolean;
  /** The connection only reads (candidates from a replica): a read-only server will do. */
  readsOnly?: boolean;
  onConnectionEvent?: (event: ConnectionEvent) => void;
}

const RECONNECT_FIRST_DELAY_MS = 100;
const RECONNECT_MAX_DELAY_MS = 5_000;

/** Thrown from a reconnect loop when the connection was closed meanwhile. */
export class DatabaseClosedError extends Error {
  constructor() {
    super('the database connection was closed');
  }
}

/** A connection made, and what was learnt of its server on the way. */
export interface Connected {
  connection: mysql.Connection;
  version: ServerVersion;
  server: ServerAddress;
  galera: GaleraNode | undefined;
  /** The session reads causally (`wsrep_sync_wait = 1`): a Galera node's connection that replaced a lost one. */
  causalReads: boolean;
}

/** Connects with capped, jittered exponential backoff, announcing the outage once and its end once. */
export async function retryUntilConnected(options: ConnectOptions, lostWith: Error | undefined, isClosed: () => boolean): Promise<Connected> {
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

/** A server that is down, a Galera node that is not synced or a read-only member may be usable soon. */
const isWorthWaitingFor = (error: unknown) => isConnectionLost(error) || error instanceof ServerNotUsableError;

/**
 * The first server of the URL that answers and can be used, in the URL's order. `afterLoss`: the
 * connection replaces one that was lost (see connectTo). `forRetry`: a failure worth waiting for
 * comes back raw, for the caller's retry loop; otherwise as one line per server tried.
 */
export async function connectToFirstAnswering(options: ConnectOptions, { forRetry, afterLoss }: { forRetry: boolean; afterLoss: boolean }): Promise<Connected> {
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

async function connectTo(options: ConnectOptions, server: ServerAddress, afterLoss: boolean): Promise<Connected> {
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
    const [[serverRows, wsrepOn, wsrepStatus]] = (await connection.query(['SELECT VERSION() AS version, @@global.read_only AS readOnly', ...GALERA_PROBE_SQL].join(';\n'))) as unknown as [
      [Array<{ version: string; readOnly: number }>, Array<{ Variable_name: string; Value: string }>, Array<{ Variable_name: string; Value: string }>],
    ];
    const version = parseServerVersion(String(serverRows[0]?.version));
    assertServerSupported(version);
    const where = settings.socketPath ?? `${server.host}:${server.port}`;
    const galera = galeraNodeFrom(wsrepOn, wsrepStatus);
    assertNodeUsable(galera, where);
    // A single-primary group's secondaries are read-only; a URL listing every member finds the
    // primary, and after a failover the new one. (MySQL's super_read_only implies read_only.)
    if (!options.readsOnly && Number(serverRows[0]?.readOnly) === 1) throw new ServerReadOnlyError(where);
    // READ COMMITTED: the candidate query sees every committed job without the article's
    // commit-to-drop-the-read-view dance, and no statement takes gap locks, so the generators'
    // inserts never wait on (or deadlock with) the consumers' locking reads. Claims stay exclusive:
    // they rest on row locks and on the status re-checked by the locking read, not on isolation.
    // UTC: lease and age arithmetic happens in the server's clock, with no time zone in between.
    // Causal reads on a Galera node that replaces a lost connection: what this process committed
    // through the node that went away (a claim, say) is certified cluster-wide but may not be
    // applied here yet. A settle that ran before it would find no row with its claim token and
    // leave the jobs to their lease; so would the check of a COMMIT whose answer was lost.
    const causalReads = galera !== undefined && afterLoss;
    await connection.query(`SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; SET SESSION time_zone = '+00:00'${causalReads ? `; ${syncWaitSql(true)}` : ''}`);
    return { connection, version, server, galera, causalReads };
  } catch (error) {
    connection.destroy();
    throw error;
  }
}

/** Turns a Galera session's causal reads on or off: each read then first waits until the node has applied what the cluster committed before it. */
export const syncWaitSql = (causal: boolean) => `SET SESSION wsrep_sync_wait = ${causal ? 1 : 0}`;
