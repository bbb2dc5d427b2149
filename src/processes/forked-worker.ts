import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ClaimGate } from './claim-gate.js';
import { SUPERVISOR_PID_ENV, type ChildMessage, type ParentMessage, type WorkerConfig } from './messages.js';

// A worker holds one connection and one batch: V8's default 16 MiB semi-spaces are most of its
// RSS. Measured in the bench: 75 MiB peak per worker with the default, 62-68 with 2 MiB, 59-69
// with 1 MiB (the more jobs a worker moves, the higher). V8's helper threads (concurrent GC and
// compilation) took 3-4 MiB more: without them, 60-62 MiB after a million jobs, at no
// measurable cost in jobs/s. About 41 MiB of that is the node binary's own mapped pages.
const WORKER_NODE_OPTIONS = ['--max-semi-space-size=1', '--single-threaded'];

const workerScript = (role: WorkerConfig['role']) => fileURLToPath(new URL(`./${role}.js`, import.meta.url));

/** The last thing a child said before it exited: a fatal error it could name, if any. */
export type FatalReport = Extract<ChildMessage, { type: 'fatal' }>;

export interface ForkedWorkerEvents {
  /** Everything the child reports except the claim-turn traffic, which stays with the gate. */
  message(message: ChildMessage): void;
  exit(code: number | null, signal: NodeJS.Signals | null, fatal: FatalReport | undefined): void;
}

/**
 * Starts one worker child and wires it up: its configuration goes over IPC, where `ps` cannot
 * show it (the URL may hold a password; only the worker's number is on its command line), its
 * claim turns go through the gate, and whatever it still held in the gate is freed when it exits.
 */
export function forkWorker(config: WorkerConfig, gate: ClaimGate, events: ForkedWorkerEvents): ChildProcess {
  const child = fork(workerScript(config.role), [String(config.number)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: WORKER_NODE_OPTIONS,
    env: { ...process.env, [SUPERVISOR_PID_ENV]: String(process.pid) },
  });
  send(child, { type: 'config', config });
  let fatal: FatalReport | undefined;
  child.on('message', (message: ChildMessage) => {
    if (message.type === 'fatal') fatal = message;
    else if (message.type === 'turn') gate.acquire(child, (lane) => (child.connected ? send(child, { type: 'go', lane }) : gate.release(child)));
    else if (message.type === 'turn-done') gate.release(child);
    else events.message(message);
  });
  child.on('exit', (code, signal) => {
    gate.releaseAll(child);
    events.exit(code, signal, fatal);
  });
  return child;
}

export function send(child: ChildProcess, message: ParentMessage): void {
  child.send(message);
}
