import { ExitCode, JobqError } from '../errors.js';

/** What `SELECT VERSION()` says, taken apart. */
export interface ServerVersion {
  flavor: 'MariaDB' | 'MySQL';
  major: number;
  minor: number;
  patch: number;
  /** The server's own version string, e.g. `10.11.19-MariaDB-0+deb12u1`. */
  text: string;
}

// SKIP LOCKED arrived in MySQL 8.0.1 and MariaDB 10.6.0; without it every consumer would queue
// behind the first one's row locks.
const MINIMUM: Record<ServerVersion['flavor'], [number, number, number]> = {
  MySQL: [8, 0, 1],
  MariaDB: [10, 6, 0],
};

export function parseServerVersion(text: string): ServerVersion {
  // MariaDB's replication-era prefix "5.5.5-" hides the real version behind it.
  const match = /^(?:5\.5\.5-(?=\d+\.\d+\.\d+-MariaDB))?(\d+)\.(\d+)\.(\d+)/i.exec(text);
  if (match === null) {
    throw new JobqError(`cannot read the server version ${JSON.stringify(text)}; jobq needs MySQL 8.0.1+ or MariaDB 10.6+`, ExitCode.unsupportedServer);
  }
  return {
    flavor: /mariadb/i.test(text) ? 'MariaDB' : 'MySQL',
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    text,
  };
}

/** Throws a one-line error unless the server has SELECT ... FOR UPDATE SKIP LOCKED. */
export function assertSkipLockedSupported(version: ServerVersion): void {
  const [major, minor, patch] = MINIMUM[version.flavor];
  const found = [version.major, version.minor, version.patch];
  const wanted = [major, minor, patch];
  const index = found.findIndex((part, i) => part !== wanted[i]);
  if (index !== -1 && (found[index] as number) < (wanted[index] as number)) {
    throw new JobqError(
      `${version.flavor} ${version.text} has no SELECT ... FOR UPDATE SKIP LOCKED; jobq needs ${version.flavor} ${wanted.join('.')} or newer`,
      ExitCode.unsupportedServer,
    );
  }
}
