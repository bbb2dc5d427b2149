import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { keptTotals } from './kept-totals.js';
import { waitUntil } from './wait.js';

/** The jobs table's rows by status, and the kept counts (jobCounts). */
export interface JobCounts {
  total: number;
  done: number;
  claimedOnce: number;
  kept: { waiting: number; done: number; failed: number };
}

const run = promisify(execFile);

/** How one of the project's 3-node cluster scripts is driven: its file and the settings that move its ports and data. */
interface ClusterScript {
  file: string;
  basePortVariable: string;
  dirVariable: string;
  /** What its stderr says when this machine cannot run it at all. */
  unavailable: RegExp;
  /** Its base ports: `first`, then every 400 ports, `count` of them. */
  basePorts: { first: number; count: number };
  /** Makes a session's reads wait until its node has applied what the others committed before them; none: they do. */
  causalReads?: string;
}

const GALERA: ClusterScript = { file: 'galera-cluster.sh', basePortVariable: 'JOBQ_GALERA_BASE_PORT', dirVariable: 'JOBQ_GALERA_DIR', unavailable: /not installed|no wsrep provider/, basePorts: { first: 12_000, count: 20 }, causalReads: 'SET SESSION wsrep_sync_wait = 1' };
const GROUP_REPLICATION: ClusterScript = { file: 'mysql-group.sh', basePortVariable: 'JOBQ_GROUP_BASE_PORT', dirVariable: 'JOBQ_GROUP_DIR', unavailable: /cannot fetch MySQL/, basePorts: { first: 20_000, count: 25 } };

/**
 * A 3-node cluster of this suite's own, on ports no other test uses: a MariaDB Galera cluster
 * (scripts/galera-cluster.sh) or a MySQL Group Replication group (scripts/mysql-group.sh). Node N
 * serves SQL on basePort + N.
 */
export class LocalCluster {
  readonly basePort: number;
  private readonly scriptFile: string;
  private readonly env: NodeJS.ProcessEnv;

  private constructor(private readonly kind: ClusterScript) {
    // Apart from the other kind's ports (with the suite on both servers at once, both may run),
    // and below Linux's ephemeral ports (from 32768), which the suite's client connections hold.
    this.basePort = kind.basePorts.first + 400 * Math.floor(Math.random() * kind.basePorts.count);
    this.scriptFile = fileURLToPath(new URL(`../../../scripts/${kind.file}`, import.meta.url));
    this.env = { ...process.env, [kind.basePortVariable]: String(this.basePort), [kind.dirVariable]: `/tmp/jobq-cluster-test-${this.basePort}` };
  }

  static galera(): LocalCluster {
    return new LocalCluster(GALERA);
  }

  static groupReplication(): LocalCluster {
    return new LocalCluster(GROUP_REPLICATION);
  }

  /** Node N's SQL port. */
  port(node: number): number {
    return this.basePort + node;
  }

  /** A jobq URL listing the nodes in this order: the first that answers is used. */
  url(database: string, nodes: readonly number[] = [1, 2, 3]): string {
    return `mysql://root@${nodes.map((node) => `127.0.0.1:${this.port(node)}`).join(',')}/${database}`;
  }

  /** Starts the cluster (the script's start with `args`); returns why it cannot run here, or undefined. */
  async start(...args: string[]): Promise<string | undefined> {
    try {
      await this.script('start', ...args);
      return undefined;
    } catch (error) {
      const stderr = String((error as { stderr?: string }).stderr ?? '');
      if (this.kind.unavailable.test(stderr)) return `no ${this.kind.file} cluster on this machine: ${stderr.trim()}`;
      throw error;
    }
  }

  async script(...args: string[]): Promise<string> {
    const { stdout } = await run('bash', [this.scriptFile, ...args], { env: this.env });
    return stdout;
  }

  /** A plain connection to node N, for assertions. */
  connect(node: number, database?: string): Promise<mysql.Connection> {
    return mysql.createConnection({ host: '127.0.0.1', port: this.port(node), user: 'root', ...(database !== undefined && { database }), supportBigNumbers: true });
  }

  /**
   * The jobs table's rows by status, and the kept counts of waiting and done jobs, read on node N
   * once it has applied what the others committed (a Galera node applies another's commits a
   * little later: a read at once found a kept count that a claim through another node had changed
   * already).
   */
  async jobCounts(node: number, database: string): Promise<JobCounts> {
    const connection = await this.connect(node, database);
    try {
      if (this.kind.causalReads !== undefined) await connection.query(this.kind.causalReads);
      const [rows] = await connection.query("SELECT COUNT(*) AS total, SUM(status = 'done') AS done, SUM(attempts = 1) AS claimedOnce FROM jobs");
      const row = (rows as Array<Record<string, string>>)[0]!;
      return { total: Number(row.total), done: Number(row.done), claimedOnce: Number(row.claimedOnce), kept: await keptTotals(async (sql) => (await connection.query(sql))[0] as unknown[], database) };
    } finally {
      await connection.end();
    }
  }

  /**
   * Fails unless the counts read on node N (those named in `expected`) are `expected`, saying what
   * the kept counts are made of (keptCountRows) and `context`.
   */
  async assertJobCounts(node: number, database: string, expected: Partial<JobCounts>, context = ''): Promise<void> {
    const counts = await this.jobCounts(node, database);
    const actual = Object.fromEntries(Object.keys(expected).map((key) => [key, counts[key as keyof JobCounts]]));
    if (!isDeepStrictEqual(actual, expected)) assert.fail(`${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}: ${await this.keptCountRows(node, database)} ${context}`);
  }

  /**
   * What the kept counts are made of, read on node N, for a failure message: the counter rows with
   * a count, the new-job rows, and the jobs by status and claim token.
   */
  async keptCountRows(node: number, database: string): Promise<string> {
    const connection = await this.connect(node, database);
    try {
      if (this.kind.causalReads !== undefined) await connection.query(this.kind.causalReads);
      const read = async (sql: string) => JSON.stringify((await connection.query(sql))[0]);
      const counters = await read('SELECT kind, shard, waiting_jobs, done_jobs, failed_jobs, claims, completed FROM jobq_counters WHERE waiting_jobs <> 0 OR done_jobs <> 0 OR failed_jobs <> 0 ORDER BY kind, shard');
      const newJobs = await read('SELECT id, kind, jobs FROM jobq_new_jobs ORDER BY id');
      const jobs = await read('SELECT status, HEX(claim_token) AS token, COUNT(*) AS n, SUM(lease_expiries) AS expiries FROM jobs GROUP BY status, token ORDER BY n DESC LIMIT 10');
      return `counter rows ${counters}; new-job rows ${newJobs}; jobs ${jobs}`;
    } finally {
      await connection.end();
    }
  }

  /** How many times a job's lease ran out and the job was claimed again, over the jobs table, read on node N. */
  async leaseExpiries(node: number, database: string): Promise<number> {
    const connection = await this.connect(node, database);
    try {
      if (this.kind.causalReads !== undefined) await connection.query(this.kind.causalReads);
      const [rows] = await connection.query('SELECT COALESCE(SUM(lease_expiries), 0) AS n FROM jobs');
      return Number((rows as Array<{ n: string }>)[0]!.n);
    } finally {
      await connection.end();
    }
  }

  /** Waits until each of `nodes` holds `count` rows in the jobs table: what was written through another has been applied there. */
  async waitForJobs(nodes: readonly number[], database: string, count: number): Promise<void> {
    for (const node of nodes) {
      await waitUntil(async () => (await this.jobCounts(node, database).catch(() => ({ total: -1 }))).total === count, `node ${node} holds the ${count} jobs`, { everyMs: 100 });
    }
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
