import { readdirSync, readFileSync } from 'node:fs';

/** Live child processes of `parentPid` with their command lines, read from /proc. */
export function childProcesses(parentPid: number): Array<{ pid: number; cmdline: string }> {
  const children: Array<{ pid: number; cmdline: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== parentPid || fields[0] === 'Z') continue;
      children.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      // the process ended while we looked
    }
  }
  return children;
}

/** The pid of consumer `number` (or generator, or handler worker) forked by the jobq process `parentPid`. */
export function workerPid(parentPid: number, role: 'consumer' | 'generator' | 'handler-worker', number: number): number {
  const match = childProcesses(parentPid).find(({ cmdline }) => cmdline.trimEnd().endsWith(`${role}.js ${number}`));
  if (match === undefined) throw new Error(`no ${role} ${number} under pid ${parentPid}`);
  return match.pid;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
