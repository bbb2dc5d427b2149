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
// behind the first one's row locks. MySQL also needs 8.0.17 for utf8mb4_0900_bin, the collation
// that compares kinds and names exactly (see exactCollation).
const MINIMUM: Record<ServerVersion['flavor'], { version: [number, number, number]; needs: string }> = {
  MySQL: { version: [8, 0, 17], needs: 'SELECT ... FOR UPDATE SKIP LOCKED and the utf8mb4_0900_bin collation' },
  MariaDB: { version: [10, 6, 0], needs: 'SELECT ... FOR UPDATE SKIP LOCKED' },
};

/**
 * The collation jobq's kinds and names are stored in: byte for byte, trailing spaces included, so
 * that `email`, `Email`, `email ` and `émail` are four kinds to the server as to the code. Each
 * server's utf8mb4_bin ignores trailing spaces, and neither has the other's NO PAD binary one.
 */
export const exactCollation = (version: ServerVersion): string => (version.flavor === 'MariaDB' ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin');

export function parseServerVersion(text: string): ServerVersion {
  // MariaDB's replication-era prefix "5.5.5-" hides the real version behind it.
  const match = /^(?:5\.5\.5-(?=\d+\.\d+\.\d+-MariaDB))?(\d+)\.(\d+)\.(\d+)/i.exec(text);
  if (match === null) {
    throw new JobqError(`cannot read the server version ${JSON.stringify(text)}; jobq needs MySQL 8.0.17+ or MariaDB 10.6+`, ExitCode.unsupportedServer);
  }
  return {
    flavor: /mariadb/i.test(text) ? 'MariaDB' : 'MySQL',
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    text,
  };
}

/** Throws a one-line error unless the server has what jobq needs (SELECT ... FOR UPDATE SKIP LOCKED above all). */
export function assertServerSupported(version: ServerVersion): void {
  const { version: wanted, needs } = MINIMUM[version.flavor];
  const found = [version.major, version.minor, version.patch];
  const index = found.findIndex((part, i) => part !== wanted[i]);
  if (index !== -1 && (found[index] as number) < (wanted[index] as number)) {
    throw new JobqError(`${version.flavor} ${version.text} is too old: jobq needs ${version.flavor} ${wanted.join('.')} or newer, for ${needs}`, ExitCode.unsupportedServer);
  }
}
