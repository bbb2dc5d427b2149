import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';

/** The server the tests use: the local default unless JOBQ_TEST_SERVER_URL names another. */
export const SERVER_URL = process.env.JOBQ_TEST_SERVER_URL ?? 'mysql://root@127.0.0.1:3306';

/** A database of its own for one test file, dropped by `drop()`. */
export interface TestDatabase {
  name: string;
  /** A jobq database URL pointing at it. */
  url: string;
  /** A plain connection to it, for assertions that read the table directly. */
  admin: mysql.Connection;
  /** Rows of a query, for assertions. */
  rows<T = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `jobq_test_${randomBytes(6).toString('hex')}`;
  const url = `${SERVER_URL}/${name}`;
  const server = new URL(SERVER_URL);
  const admin = await mysql.createConnection({
    host: server.hostname,
    port: Number(server.port || 3306),
    user: decodeURIComponent(server.username) || 'root',
    password: decodeURIComponent(server.password),
    supportBigNumbers: true,
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
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
}
