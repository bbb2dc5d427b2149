import { existsSync } from 'node:fs';
import { ExitCode, JobqError } from '../errors.js';
import { validateIdentifier } from './identifiers.js';

export const DEFAULT_DATABASE_URL = 'mysql://root@127.0.0.1:3306/jobq';
export const DATABASE_URL_ENV = 'JOBQ_DATABASE_URL';

/** One server of a database URL. */
export interface ServerAddress {
  host: string;
  port: number;
}

/** Where to connect, taken apart from a `mysql://user:password@host:port[,host:port...]/database` URL. */
export interface ConnectionSettings {
  /**
   * The servers to try, in order: jobq uses the first that answers (and, on Galera, is synced),
   * and after a lost connection the first that answers again. Several for a Galera cluster.
   */
  servers: readonly ServerAddress[];
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

const EXPECTED = '(expected mysql://user:password@host:3306/database, or host1:3306,host2:3306 for several servers)';

/** Parses a database URL; anything malformed is a usage error naming the part that is wrong. `name`: what the URL is, for the message. */
export function parseDatabaseUrl(text: string, name = 'database URL'): ConnectionSettings {
  const fail = (what: string): never => {
    throw new JobqError(`invalid ${name} ${JSON.stringify(redactPassword(text))}: ${what} ${EXPECTED}`, ExitCode.usage);
  };
  const hostList = splitHostList(text);
  // WHATWG URL takes one host; each server of a list is read in a URL of its own.
  const parse = (host: string): URL => {
    try {
      return new URL(hostList === undefined ? text : hostList.withHosts([host]));
    } catch {
      return fail(hostList === undefined || hostList.hosts.length === 1 ? 'not a URL' : `${JSON.stringify(host)} is not a host[:port]`);
    }
  };
  const urls = (hostList?.hosts ?? ['']).map(parse);
  const url = urls[0]!;
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') fail(`scheme must be mysql:, not ${url.protocol}`);
  const decoded = (part: string, what: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return fail(`the ${what} has a malformed %-escape (write a % itself as %25)`);
    }
  };
  const database = decoded(url.pathname.replace(/^\//, ''), 'database name');
  if (database === '') fail('no database name after the host');
  try {
    validateIdentifier(database, 'database');
  } catch (error) {
    fail((error as Error).message);
  }
  const socketPath = url.searchParams.get('socket') ?? undefined;
  if (urls.some((one) => one.hostname === '') && socketPath === undefined) fail('no host');
  if (urls.some((one) => one.port === '0')) fail('port 0 is no port a server listens on');
  return {
    servers: urls.map((one) => ({ host: one.hostname.replace(/^\[|\]$/g, ''), port: one.port === '' ? 3306 : Number(one.port) })),
    user: decoded(url.username, 'user name') || 'root',
    password: decoded(url.password, 'password'),
    database,
    ...(socketPath !== undefined && { socketPath }),
  };
}

/**
 * The same URL with its list of servers turned so that the one at `index` (modulo their number)
 * comes first and the others follow as fallbacks: how processes of one run spread over the
 * nodes of a cluster. A URL with one server comes back unchanged.
 */
export function startingWithServer(text: string, index: number): string {
  const hostList = splitHostList(text);
  if (hostList === undefined || hostList.hosts.length < 2) return text;
  const { hosts } = hostList;
  const first = index % hosts.length;
  return hostList.withHosts([...hosts.slice(first), ...hosts.slice(0, first)]);
}

/** The comma-separated servers of a URL's authority, and a way to put other ones in their place. */
function splitHostList(text: string): { hosts: string[]; withHosts: (hosts: readonly string[]) => string } | undefined {
  // The last @ ends the user and password, as for WHATWG URL: a password may hold a literal @.
  const match = /^([a-z][a-z0-9+.-]*:\/\/(?:[^/?#]*@)?)([^/?#@]*)(.*)$/is.exec(text);
  if (match === null) return undefined;
  const [, head, hosts, tail] = match as unknown as [string, string, string, string];
  return { hosts: hosts.split(','), withHosts: (list) => `${head}${list.join(',')}${tail}` };
}

/** The URL with its password replaced by `***`, for messages: all of it up to the last @ of the authority. */
export function redactPassword(text: string): string {
  return text.replace(/^([a-z]+:\/\/[^:/@]*:)[^/?#]*@/i, '$1***@');
}
