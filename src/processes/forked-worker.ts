import { fork, type ChildProcess } from 'node:child_process';
import type { ClaimGate } from '../claim/claim-gate.js';
import type { ChildSpec } from './child-spec.js';
import { SUPERVISOR_PID_ENV, type ChildMessage, type ParentMessage } from './messages.js';

// A worker holds one connection and one batch: V8's default 16 MiB semi-spaces and its helper
// threads (concurrent GC and compilation) were most of its memory. Without them a worker stays
// near 60 MiB, at no measurable cost in jobs/s (docs/performance.md, "The article's demo").
const WORKER_NODE_OPTIONS = ['--max-semi-space-size=1', '--single-threaded'];

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
 * claim turns go through the gate (at once without one), and whatever it still held in the gate
 * is freed when it exits.
 */
export function forkWorker({ script, config }: ChildSpec, gate: ClaimGate | undefined, events: ForkedWorkerEvents): ChildProcess {
  const child = fork(script, [String(config.number)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: WORKER_NODE_OPTIONS,
    env: { ...process.env, [SUPERVISOR_PID_ENV]: String(process.pid) },
  });
  send(child, { type: 'config', config });
  let fatal: FatalReport | undefined;
  child.on('message', (message: ChildMessage) => {
    if (message.type === 'fatal') fatal = message;
    else if (message.type === 'turn') grantTurn(child, gate);
    else if (message.type === 'turn-done') gate?.release(child);
    else events.message(message);
  });
  child.on('exit', (code, signal) => {
    gate?.releaseAll(child);
    events.exit(code, signal, fatal);
  });
  return child;
}

/** A turn once the gate has one (with its lane); at once without a gate. */
function grantTurn(child: ChildProcess, gate: ClaimGate | undefined): void {
  if (gate === undefined) return send(child, { type: 'go' });
  gate.acquire(child, (lane) => (child.connected ? send(child, { type: 'go', lane }) : gate.release(child)));
}

export function send(child: ChildProcess, message: ParentMessage): void {
  child.send(message);
}
