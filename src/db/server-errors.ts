import type { ConnectionSettings, ServerAddress } from '../config/database-url.js';
import { ExitCode, JobqError } from '../errors.js';

/** The parts of a mysql2 error jobq looks at. */
interface DriverError {
  code?: string;
  errno?: number;
  fatal?: boolean;
  message?: string;
}

const asDriverError = (error: unknown): DriverError =>
  typeof error === 'object' && error !== null ? (error as DriverError) : {};

/**
 * A conflict jobq found itself: a write changed fewer rows than the rows it had locked, because
 * another node's transaction got to them (Galera). Handled as a deadlock: rolled back, run again.
 */
export class WriteConflictError extends Error {
  readonly errno = 1213;
}

/**
 * Group Replication refused a COMMIT for a conflict: in a multi-primary group another member's
 * transaction changed one of its rows first, as when two members' claims locked the same job (row
 * locks are local to a member). It says so as 3101 ("Plugin instructed the server to rollback the
 * current transaction") when certification fails, or as 1180 carrying InnoDB's deadlock (error 149)
 * when a transaction certified elsewhere had to be applied over it. Either way, like a deadlock,
 * the transaction was undone whole and can run again.
 */
function isLostCertification({ errno, message }: DriverError): boolean {
  return errno === 3101 || (errno === 1180 && /\berror 149\b/.test(message ?? ''));
}

/** Deadlock (1213), lock wait timeout (1205) or lost certification: rolled back; the transaction can run again. */
export function isRetryableLockError(error: unknown): boolean {
  const driverError = asDriverError(error);
  return driverError.errno === 1213 || driverError.errno === 1205 || isLostCertification(driverError);
}

/** The server refused a write: the user may not change the table (1142), or the server is read-only (1290). */
export function isWriteRefused(error: unknown): boolean {
  const { errno } = asDriverError(error);
  return errno === 1142 || errno === 1290;
}

/** A KILL QUERY from another connection ended the statement (1317, ER_QUERY_INTERRUPTED). */
export function isStatementInterrupted(error: unknown): boolean {
  return asDriverError(error).errno === 1317;
}

/** KILL named a connection that is gone (1094, ER_NO_SUCH_THREAD). */
export function isNoSuchConnection(error: unknown): boolean {
  return asDriverError(error).errno === 1094;
}

/** KILL named another user's connection, which this one may not end (1095, ER_KILL_DENIED_ERROR). */
export function isKillDenied(error: unknown): boolean {
  return asDriverError(error).errno === 1095;
}

/** A unique key refused a row (1062); the statement, or with it the transaction, did not go through. */
export function isDuplicateKey(error: unknown): boolean {
  return asDriverError(error).errno === 1062;
}

/**
 * A cluster node that cannot serve jobq now, which is to a worker as good as a lost connection: it
 * reconnects, to the next server of the URL that can be used. A Galera node that left the Primary
 * component (or is not synced yet) answers everything but SHOW and SET with 1047 "WSREP has not yet
 * prepared node for application use". A Group Replication member that was expelled or left the
 * group refuses COMMIT with 3100 (the replication hook failed), and one that is, or has become,
 * read-only (a secondary in single-primary mode, a member in ERROR state) refuses writes with 1290.
 * A Galera node that drops out of the Primary component while it commits refuses the COMMIT with
 * 1180 "... (provider status: Not connected to Primary Component)" (a CI run saw a consumer die of
 * it while the cluster evicted a killed node); the transaction did not go through.
 */
const NODE_UNUSABLE_ERRNOS = new Set([1047, 3100, 1290]);
const outOfPrimaryComponent = ({ errno, message }: DriverError) => errno === 1180 && /Not connected to Primary Component/i.test(message ?? '');

const CONNECTION_LOST_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_SERVER_SHUTDOWN',
  'ER_CON_COUNT_ERROR',
  'ER_CONNECTION_KILLED',
]);

/**
 * The server refused the login or the database: reconnecting will not help. MariaDB refuses an
 * unknown user with 1045 ("using password: YES") or, now and then, with 1698 (no such words).
 */
const ACCESS_DENIED_CODES = new Set(['ER_ACCESS_DENIED_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR', 'ER_DBACCESS_DENIED_ERROR']);

/**
 * The connection is gone (server restart, network cut, killed thread) or cannot be made right now.
 * Such an error is worth a reconnect; the outcome of a COMMIT it interrupted is unknown.
 */
export function isConnectionLost(error: unknown): boolean {
  const { code, errno, fatal, message } = asDriverError(error);
  if (code !== undefined && CONNECTION_LOST_CODES.has(code)) return true;
  if (errno !== undefined && NODE_UNUSABLE_ERRNOS.has(errno)) return true;
  if (outOfPrimaryComponent({ errno, message })) return true;
  if (message?.includes("Can't add new command when connection is in closed state")) return true;
  return fatal === true && !(code !== undefined && ACCESS_DENIED_CODES.has(code)) && code !== 'ER_BAD_DB_ERROR';
}

/**
 * A server that answers but cannot be used right now: the next server of the URL is tried, and a
 * worker that finds none waits for one, as for a server that is down.
 */
export class ServerNotUsableError extends JobqError {}

/** A server jobq would write to that only reads: a Group Replication secondary, a replica. */
export class ServerReadOnlyError extends ServerNotUsableError {
  constructor(where: string) {
    super(
      `the server at ${where} is read-only (a Group Replication secondary, or a replica); ` +
        'point --database-url at the primary, or list every member (host1:3306,host2:3306) and jobq uses the one that takes writes',
      ExitCode.connection,
    );
  }
}

/**
 * Turns a driver error met while connecting into one line that says what to do, or returns the
 * error unchanged when jobq has nothing better to say.
 */
export function describeConnectError(error: unknown, settings: ConnectionSettings, server: ServerAddress): unknown {
  if (error instanceof JobqError) return error;
  const { code, message } = asDriverError(error);
  const where = settings.socketPath ?? `${server.host}:${server.port}`;
  if (code !== undefined && ACCESS_DENIED_CODES.has(code)) {
    return new JobqError(`access denied for user ${JSON.stringify(settings.user)} at ${where}; check the user and password in --database-url`, ExitCode.connection, { cause: error });
  }
  switch (code) {
    case 'ECONNREFUSED':
      return new JobqError(
        `cannot connect to the server at ${where}: connection refused; is MySQL/MariaDB running there? ` +
          `(see "Server" in the README, or set --database-url)`,
        ExitCode.connection,
        { cause: error },
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new JobqError(`cannot connect: unknown host ${JSON.stringify(server.host)}; check --database-url`, ExitCode.connection, { cause: error });
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new JobqError(`cannot connect to the server at ${where}: ${code}; check the host and your network`, ExitCode.connection, { cause: error });
    case 'ENOENT':
      return new JobqError(`cannot connect: no socket at ${where}; is the server running?`, ExitCode.connection, { cause: error });
    case 'ER_BAD_DB_ERROR':
      return new JobqError(
        `database ${JSON.stringify(settings.database)} does not exist at ${where}; run "jobq setup-tables" to create it`,
        ExitCode.connection,
        { cause: error },
      );
    default:
      return code === undefined ? error : new JobqError(`cannot connect to the server at ${where}: ${message ?? code}`, ExitCode.connection, { cause: error });
  }
}

/** Turns a driver error met while using the jobs table into one actionable line, where one exists. */
export function describeQueryError(error: unknown, table: string, database: string): unknown {
  const { errno } = asDriverError(error);
  if (isConnectionLost(error)) {
    return new JobqError(`lost the connection to the server (${asDriverError(error).message ?? 'closed'}); try again when it is back`, ExitCode.connection, { cause: error });
  }
  if (errno === 1146) {
    return new JobqError(
      `table ${JSON.stringify(table)} does not exist in database ${JSON.stringify(database)}; run "jobq setup-tables" first`,
      ExitCode.schema,
      { cause: error },
    );
  }
  if (errno === 1054) {
    return new JobqError(
      `table ${JSON.stringify(table)} in database ${JSON.stringify(database)} has the wrong shape (${asDriverError(error).message}); ` +
        `run "jobq setup-tables" to migrate it, or pick another --table`,
      ExitCode.schema,
      { cause: error },
    );
  }
  if (errno === 1665) {
    return new JobqError(
      'the server logs statements (binlog_format=STATEMENT), which cannot replicate READ COMMITTED writes; set binlog_format=ROW or MIXED',
      ExitCode.unsupportedServer,
      { cause: error },
    );
  }
  return error;
}
