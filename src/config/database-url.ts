import { existsSync } from 'node:fs';
import { ExitCode, JobqError } from '../errors.js';
import { validateIdentifier } from './identifiers.js';

export const DEFAULT_DATABASE_URL = 'mysql://root@127.0.0.1:3306/jobq';
export const DATABASE_URL_ENV = 'JOBQ_DATABASE_URL';

/** Where to connect, taken apart from a `mysql://user:password@host:port/database` URL. */
export interface ConnectionSettings {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** A Unix socket path (`?socket=/run/mysqld/mysqld.sock`); when set, host and port are unused. */
  socketPath?: string;
}

/**
 * The URL to use: the flag, else `JOBQ_DATABASE_URL`, else that key in `./.env`, else the local
 * default. The environment wins over `.env`, as `process.loadEnvFile` does not overwrite it.
 */
export function resolveDatabaseUrl(flag: string | undefined, cwdEnvFile = '.env'): string {
  if (flag !== undefined) return flag;
  if (process.env[DATABASE_URL_ENV] === undefined && existsSync(cwdEnvFile)) {
    process.loadEnvFile(cwdEnvFile);
  }
  return process.env[DATABASE_URL_ENV] ?? DEFAULT_DATABASE_URL;
}

/** Parses a database URL; anything malformed is a usage error naming the part that is wrong. */
export function parseDatabaseUrl(text: string): ConnectionSettings {
  const fail = (what: string): never => {
    throw new JobqError(
      `invalid database URL ${JSON.stringify(redactPassword(text))}: ${what} ` +
        `(expected mysql://user:password@host:3306/database)`,
      ExitCode.usage,
    );
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('not a URL');
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') fail(`scheme must be mysql:, not ${url.protocol}`);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database === '') fail('no database name after the host');
  try {
    validateIdentifier(database, 'database');
  } catch (error) {
    fail((error as Error).message);
  }
  const port = url.port === '' ? 3306 : Number(url.port);
  const socketPath = url.searchParams.get('socket') ?? undefined;
  if (url.hostname === '' && socketPath === undefined) fail('no host');
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    user: decodeURIComponent(url.username) || 'root',
    password: decodeURIComponent(url.password),
    database,
    ...(socketPath !== undefined && { socketPath }),
  };
}

/** The URL with its password replaced by `***`, for messages. */
export function redactPassword(text: string): string {
  return text.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}
