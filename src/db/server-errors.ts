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

/** Deadlock (1213) or lock wait timeout (1205): InnoDB rolled back; the transaction can run again. */
export function isRetryableLockError(error: unknown): boolean {
  const { errno } = asDriverError(error);
  return errno === 1213 || errno === 1205;
}

/** A unique key refused a row (1062); the statement, or with it the transaction, did not go through. */
export function isDuplicateKey(error: unknown): boolean {
  return asDriverError(error).errno === 1062;
}

/**
 * A Galera node that left the Primary component (or is not synced yet) answers everything but
 * SHOW and SET with 1047 "WSREP has not yet prepared node for application use": to a worker, as
 * good as a lost connection; it reconnects, to the next node of the URL that can be used.
 */
const NODE_NOT_READY_ERRNO = 1047;

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
 * The connection is gone (server restart, network cut, killed thread) or cannot be made right now.
 * Such an error is worth a reconnect; the outcome of a COMMIT it interrupted is unknown.
 */
export function isConnectionLost(error: unknown): boolean {
  const { code, errno, fatal, message } = asDriverError(error);
  if (code !== undefined && CONNECTION_LOST_CODES.has(code)) return true;
  if (errno === NODE_NOT_READY_ERRNO) return true;
  if (message?.includes("Can't add new command when connection is in closed state")) return true;
  return fatal === true && code !== 'ER_ACCESS_DENIED_ERROR' && code !== 'ER_BAD_DB_ERROR';
}

/**
 * Turns a driver error met while connecting into one line that says what to do, or returns the
 * error unchanged when jobq has nothing better to say.
 */
export function describeConnectError(error: unknown, settings: ConnectionSettings, server: ServerAddress): unknown {
  if (error instanceof JobqError) return error;
  const { code, message } = asDriverError(error);
  const where = settings.socketPath ?? `${server.host}:${server.port}`;
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
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_DBACCESS_DENIED_ERROR':
      return new JobqError(
        `access denied for user ${JSON.stringify(settings.user)} at ${where}; check the user and password in --database-url`,
        ExitCode.connection,
        { cause: error },
      );
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
