import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { ON_MARIADB, SERVER_PORT } from './test-database.js';

const run = promisify(execFile);
// The same make of server as the test server: MySQL runs the suite's private servers too.
const SCRIPT = fileURLToPath(new URL(`../../../scripts/${ON_MARIADB ? 'private-server' : 'mysql-server'}.sh`, import.meta.url));

/**
 * A port for a private server of this run, from `base` up: the suite's runs against several test
 * servers go on at once, so each draws from a band of its own (by the test server's port), with
 * room for a pair (a primary and its replica) at each pick. Keep `base` below 32768, under Linux's
 * ephemeral ports: a server cannot listen on a port that one of the suite's thousands of client
 * connections holds (or left in TIME_WAIT), and then never answers.
 */
export const privatePort = (base: number): number => base + (SERVER_PORT % 10) * 100 + 2 * Math.floor(Math.random() * 50);

/** A private server of the test's own (scripts/private-server.sh or mysql-server.sh), on its own port and data folder. */
export class PrivateServer {
  constructor(readonly port: number) {}

  url(database: string): string {
    return `mysql://root@127.0.0.1:${this.port}/${database}`;
  }

  start(): Promise<void> {
    return this.script('start');
  }

  /** Starts this server as a fresh replica of `primary`. */
  startReplicaOf(primary: PrivateServer): Promise<void> {
    return this.script('start-replica', '--of', String(primary.port));
  }

  stop(): Promise<void> {
    return this.script('stop');
  }

  destroy(): Promise<void> {
    return this.script('destroy');
  }

  /** Rows of one statement, on a connection opened for it. */
  async query<T>(sql: string): Promise<T[]> {
    const connection = await mysql.createConnection({ host: '127.0.0.1', port: this.port, user: 'root', supportBigNumbers: true });
    try {
      return (await connection.query(sql))[0] as T[];
    } finally {
      await connection.end();
    }
  }

  private async script(command: string, ...args: string[]): Promise<void> {
    await run('bash', [SCRIPT, command, String(this.port), ...args], { env: { ...process.env, JOBQ_PRIVATE_SERVER_DIR: `/tmp/jobq-test-server-${this.port}` } });
  }
}
