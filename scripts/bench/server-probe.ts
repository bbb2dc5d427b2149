import { readFileSync, readdirSync } from 'node:fs';
import type mysql from 'mysql2/promise';
import { childProcesses } from '../../test/helpers/processes.js';
import { deadlocksSoFar } from '../../test/helpers/server-counters.js';

/** Server counters a scenario is judged by, read before and after it. */
export interface ServerCounters {
  deadlocks: number;
  rowLockWaits: number;
  /** CPU seconds mariadbd/mysqld has used (user + system), from /proc. */
  cpuSeconds: number;
}

const CLOCK_TICKS = 100;

/** The server `admin` is connected to, by its pid file; else the first mariadbd/mysqld running. */
export async function serverPid(admin: mysql.Connection): Promise<number | undefined> {
  const [rows] = await admin.query('SELECT @@pid_file AS pidFile');
  try {
    return Number(readFileSync(String((rows as Array<{ pidFile: string }>)[0]?.pidFile), 'utf8').trim());
  } catch {
    // not readable from here: fall back to the process list
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (comm === 'mariadbd' || comm === 'mysqld') return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

/** Reads the deadlock and lock-wait counters and the server's CPU time. */
export async function readServerCounters(admin: mysql.Connection): Promise<ServerCounters> {
  const [rows] = await admin.query("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'");
  const pid = await serverPid(admin);
  return {
    deadlocks: await deadlocksSoFar(admin),
    rowLockWaits: Number((rows as Array<{ Value: string }>)[0]?.Value ?? 0),
    cpuSeconds: pid === undefined ? NaN : cpuSecondsOf(pid),
  };
}

/** CPU seconds (user + system) a process has used, from /proc. */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Server settings worth printing next to the figures. */
export async function readServerSettings(admin: mysql.Connection): Promise<Record<string, string>> {
  const [rows] = await admin.query(
    `SHOW GLOBAL VARIABLES WHERE Variable_name IN ('version', 'innodb_buffer_pool_size', 'innodb_flush_log_at_trx_commit',
       'log_bin', 'binlog_format', 'sync_binlog', 'transaction_isolation', 'tx_isolation', 'innodb_purge_threads')`,
  );
  return Object.fromEntries((rows as Array<{ Variable_name: string; Value: string }>).map((r) => [r.Variable_name, r.Value]));
}

/** Resident memory of a process in MiB (0 once it has gone). */
export function rssMiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) / 1024;
  } catch {
    return 0;
  }
}

/** Samples the RSS of `parentPid` and every child of it until stopped; keeps the peak per pid. */
export function sampleRss(parentPid: number, everyMs = 200): { stop(): { peakChildMiB: number; peakParentMiB: number; peakTreeMiB: number } } {
  const peaks = new Map<number, number>();
  let peakTree = 0;
  const sample = () => {
    let tree = rssMiB(parentPid);
    for (const { pid } of childProcesses(parentPid)) {
      const mib = rssMiB(pid);
      tree += mib;
      peaks.set(pid, Math.max(peaks.get(pid) ?? 0, mib));
    }
    peaks.set(-parentPid, Math.max(peaks.get(-parentPid) ?? 0, rssMiB(parentPid)));
    peakTree = Math.max(peakTree, tree);
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const children = [...peaks].filter(([pid]) => pid > 0).map(([, mib]) => mib);
      return { peakChildMiB: children.length === 0 ? 0 : Math.max(...children), peakParentMiB: peaks.get(-parentPid) ?? 0, peakTreeMiB: peakTree };
    },
  };
}
