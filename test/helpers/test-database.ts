import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';

/**
 * The server the tests use: the local default unless JOBQ_TEST_SERVER_URL names another. It is the
 * one setting: every test connects there, and private servers a test starts are of the same make.
 */
export const SERVER_URL = process.env.JOBQ_TEST_SERVER_URL ?? 'mysql://root@127.0.0.1:3306';
const server = new URL(SERVER_URL);

/** The test server's port. */
export const SERVER_PORT = Number(server.port || 3306);

/** The test server as jobq names it in its output: host:port. */
export const SERVER_ADDRESS = `${server.hostname}:${server.port || 3306}`;

/** mysql2 options for a connection of the test's own to the test server. */
export function serverConnectionOptions(database?: string): mysql.ConnectionOptions {
  return {
    host: server.hostname,
    port: SERVER_PORT,
    user: decodeURIComponent(server.username) || 'root',
    password: decodeURIComponent(server.password),
    ...(database !== undefined && { database }),
    supportBigNumbers: true,
  };
}

/** Whether the test server is MariaDB rather than Oracle MySQL, for the few tests that only make sense on one. */
export const ON_MARIADB: boolean = await (async () => {
  const connection = await mysql.createConnection(serverConnectionOptions());
  try {
    const [rows] = await connection.query('SELECT VERSION() AS version');
    return /mariadb/i.test((rows as Array<{ version: string }>)[0]!.version);
  } finally {
    await connection.end();
  }
})();

// The tabular plan with its partitions column on either server: MySQL 9 prints a tree unless told,
// and MariaDB shows partitions only when asked.
const EXPLAIN = ON_MARIADB ? 'EXPLAIN PARTITIONS' : 'EXPLAIN FORMAT=TRADITIONAL';

/** A database of its own for one test file, dropped by `drop()`. */
export interface TestDatabase {
  name: string;
  /** A jobq database URL pointing at it. */
  url: string;
  /** A plain connection to it, for assertions that read the table directly. */
  admin: mysql.Connection;
  /** Rows of a query, for assertions. */
  rows<T = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<T[]>;
  /** The plan of a statement as rows, its placeholders filled by the driver exactly as jobq sends them. */
  explain<T>(sql: string, values: readonly unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `jobq_test_${randomBytes(6).toString('hex')}`;
  const url = `${SERVER_URL}/${name}`;
  const admin = await mysql.createConnection({
    ...serverConnectionOptions(),
    dateStrings: true,
    // Migrations come as several statements in one text, as setup-tables sends them.
    multipleStatements: true,
  });
  await admin.query(`CREATE DATABASE \`${name}\``);
  await admin.query(`USE \`${name}\``);
  return {
    name,
    url,
    admin,
    async rows<T>(sql: string, values?: unknown[]) {
      const [rows] = await admin.query(sql, values);
      return rows as T[];
    },
    async explain<T>(sql: string, values: readonly unknown[]) {
      const [rows] = await admin.query(`${EXPLAIN} ${sql}`, [...values]);
      return rows as T[];
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
}
