import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../../scripts/galera-cluster.sh', import.meta.url));

/** A 3-node Galera cluster of this suite's own, on ports no other test uses, from scripts/galera-cluster.sh. */
export class GaleraCluster {
  readonly basePort = 40_000 + 400 * Math.floor(Math.random() * 50);
  private readonly env = { ...process.env, JOBQ_GALERA_BASE_PORT: String(this.basePort), JOBQ_GALERA_DIR: `/tmp/jobq-galera-test-${this.basePort}` };

  /** Node N's SQL port. */
  port(node: number): number {
    return this.basePort + node;
  }

  /** A jobq URL listing the nodes in this order: the first that answers is used. */
  url(database: string, nodes: readonly number[] = [1, 2, 3]): string {
    return `mysql://root@${nodes.map((node) => `127.0.0.1:${this.port(node)}`).join(',')}/${database}`;
  }

  /** Starts the cluster; returns why it cannot run here (no Galera installed), or undefined. */
  async start(): Promise<string | undefined> {
    try {
      await this.script('start');
      return undefined;
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? '');
      if (/not installed|no wsrep provider/.test(stderr)) return `no Galera cluster on this machine: ${stderr.trim()}`;
      throw error;
    }
  }

  async script(...args: string[]): Promise<string> {
    const { stdout } = await run('bash', [SCRIPT, ...args], { env: this.env });
    return stdout;
  }

  /** A plain connection to node N, for assertions. */
  connect(node: number, database?: string): Promise<mysql.Connection> {
    return mysql.createConnection({ host: '127.0.0.1', port: this.port(node), user: 'root', ...(database !== undefined && { database }), supportBigNumbers: true });
  }

  /** The sum over the given nodes of some global status counters (wsrep_local_cert_failures, ...). */
  async statusSum(nodes: readonly number[], names: readonly string[]): Promise<number> {
    let total = 0;
    for (const node of nodes) {
      const connection = await this.connect(node);
      try {
        const [rows] = await connection.query('SHOW GLOBAL STATUS WHERE Variable_name IN (?)', [names]);
        for (const row of rows as Array<{ Value: string }>) total += Number(row.Value);
      } finally {
        await connection.end();
      }
    }
    return total;
  }
}
