import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const JOBQ = fileURLToPath(new URL('../../../bin/jobq.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  pid: number;
  /** Resolves when the process has exited. */
  done: Promise<CliResult>;
  /** Resolves when stdout or stderr has shown a line matching `pattern`, with that match. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  kill(signal: NodeJS.Signals): void;
}

/** No run of the CLI in a test lasts this long: one that does is hung, and is killed so that its test fails instead of waiting for ever. */
const HUNG_AFTER_MS = 240_000;

/**
 * Starts the built `jobq` binary, as a user would, with colours off; `input` becomes its standard
 * input. It runs in a process group of its own, which is killed, with the processes it started,
 * if it is still running after HUNG_AFTER_MS.
 */
export function startCli(args: string[], env: Record<string, string> = {}, input?: string | Buffer): CliRun {
  const { FORCE_COLOR: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, [JOBQ, ...args], {
    env: { ...inherited, NO_COLOR: '1', ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const hung = setTimeout(() => {
    stderr += `\n[jobq ${args[0]} was still running after ${HUNG_AFTER_MS / 1000} s: killed]`;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Gone already: its close event follows.
    }
  }, HUNG_AFTER_MS).unref();
  if (input !== undefined) child.stdin!.end(input);
  let stdout = '';
  let stderr = '';
  const watchers: Array<{ pattern: RegExp; resolve: (match: RegExpExecArray) => void }> = [];
  const check = () => {
    for (const watcher of [...watchers]) {
      const match = watcher.pattern.exec(stdout) ?? watcher.pattern.exec(stderr);
      if (match !== null) {
        watchers.splice(watchers.indexOf(watcher), 1);
        watcher.resolve(match);
      }
    }
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => ((stdout += chunk), check()));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => ((stderr += chunk), check()));
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(hung);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    pid: child.pid!,
    done,
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; stdout:\n${stdout}\nstderr:\n${stderr}`)), timeoutMs);
        watchers.push({ pattern, resolve: (match) => (clearTimeout(timer), resolve(match)) });
        check();
      }),
    kill: (signal) => child.kill(signal),
  };
}

/** Runs `jobq` to the end. */
export function runCli(args: string[], env: Record<string, string> = {}, input?: string | Buffer): Promise<CliResult> {
  return startCli(args, env, input).done;
}

/** Every claim line of the article's form in `stdout`, as (consumer, ids). */
export function parseClaimLines(stdout: string): Array<{ consumer: number; ids: number[] }> {
  const claims: Array<{ consumer: number; ids: number[] }> = [];
  for (const line of stdout.split('\n')) {
    const match = /^consumer  (\d+) #records = (\d+) - \[([\d, ]*)\]$/.exec(line);
    if (match === null) continue;
    const ids = match[3] === '' ? [] : match[3]!.split(', ').map(Number);
    if (ids.length !== Number(match[2])) throw new Error(`claim line counts ${match[2]} ids but lists ${ids.length}: ${line}`);
    claims.push({ consumer: Number(match[1]), ids });
  }
  return claims;
}

/** Ids that appear in more than one claim. */
export function duplicates(ids: readonly number[]): number[] {
  const seen = new Set<number>();
  const twice = new Set<number>();
  for (const id of ids) (seen.has(id) ? twice : seen).add(id);
  return [...twice];
}
