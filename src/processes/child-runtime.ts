import { connectionEventDetail, type ConnectionEvent } from '../db/connection-events.js';
import { ExitCode, JobqError } from '../errors.js';
import type { Lane } from '../queue/types.js';
import type { TurnGate, TurnTicket } from '../claim/turn-gate.js';
import { SUPERVISOR_PID_ENV, type ChildConfig, type ChildMessage, type ParentMessage } from './messages.js';

/**
 * Sends a message to the supervisor. Never throws: a child started by hand (no IPC channel) or
 * orphaned by a killed supervisor stays quiet and still settles the batch in hand.
 */
export function report(message: ChildMessage): void {
  if (process.send !== undefined && process.connected) process.send(message, undefined, undefined, () => undefined);
}

/**
 * The worker's configuration, the supervisor's first message. It comes over IPC, not as an
 * argument, because it holds the database URL: `ps` shows every process's arguments to everyone.
 */
export function readConfig<T extends ChildConfig>(role: T['role']): Promise<T> {
  if (process.send === undefined) {
    return Promise.reject(new JobqError(`the ${role} process is started by jobq, which sends its configuration over IPC`, ExitCode.usage));
  }
  return new Promise((resolve, reject) => {
    const onMessage = (message: ParentMessage) => {
      if (message.type !== 'config') return;
      process.removeListener('message', onMessage);
      if (message.config.role === role) resolve(message.config as T);
      else reject(new Error(`expected a ${role} configuration, got a ${message.config.role} one`));
    };
    process.on('message', onMessage);
  });
}

/**
 * Calls `then` once the supervisor is gone (kill -9 of the parent). The IPC channel's 'disconnect'
 * usually says so; the parent pid changing (the orphan is adopted) says so for certain, and was
 * seen to be needed: an orphan whose channel never reported the disconnect ran on for minutes.
 * The supervisor's pid comes from the supervisor: a worker still loading when the supervisor died
 * has missed the 'disconnect' and would read its adopter's pid as its parent's. Such a worker
 * finds its channel closed or its parent changed at once.
 */
function whenSupervisorGone(then: () => void): void {
  if (process.send === undefined) return;
  const supervisor = Number(process.env[SUPERVISOR_PID_ENV] ?? process.ppid);
  let gone = false;
  const once = () => {
    if (gone) return;
    gone = true;
    clearInterval(watch);
    then();
  };
  const orphaned = () => !process.connected || process.ppid !== supervisor;
  process.on('disconnect', once);
  const watch = setInterval(() => orphaned() && once(), 500).unref();
  if (orphaned()) setImmediate(once);
}

// Listening from the moment the worker loads: a "stop" may arrive right behind the configuration,
// before the worker has read it.
const stopping = new AbortController();
const stop = () => stopping.abort();
process.on('message', (message: ParentMessage) => message.type === 'stop' && stop());
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
whenSupervisorGone(stop);

/**
 * A flag that turns true when the worker should finish what it has in hand and exit: the
 * supervisor's "stop", SIGINT/SIGTERM (a terminal's Ctrl-C reaches the whole process group,
 * children included, and must not kill a consumer in the middle of a batch), or the supervisor's
 * death.
 */
export function stopRequests(): { readonly requested: boolean; readonly signal: AbortSignal } {
  return {
    get requested() {
      return stopping.signal.aborted;
    },
    signal: stopping.signal,
  };
}

const waitingForTurn: Array<(lane: Lane | undefined) => void> = [];
let supervised = process.send !== undefined;
process.on('message', (message: ParentMessage) => message.type === 'go' && waitingForTurn.shift()?.(message.lane));
// Without a supervisor nobody hands out turns: whoever waits goes ahead, and so does everyone after.
whenSupervisorGone(() => {
  supervised = false;
  waitingForTurn.splice(0).forEach((go) => go(undefined));
});

/**
 * Turns granted by the supervisor's ClaimGate, with the lane that comes with each; at once and
 * without a lane when there is no supervisor.
 */
export const supervisorTurns: TurnGate = {
  async enter(): Promise<TurnTicket> {
    if (!supervised || !process.connected) return { leave: () => undefined };
    const lane = await new Promise<Lane | undefined>((go) => {
      waitingForTurn.push(go);
      report({ type: 'turn' });
    });
    return { ...(lane !== undefined && { lane }), leave: () => report({ type: 'turn-done' }) };
  },
};

/** Tells the supervisor about an outage, or its end. */
export function reportConnection(event: ConnectionEvent): void {
  report({ type: 'connection', state: event.state, detail: connectionEventDetail(event) });
}

/**
 * Runs the worker's main loop; any error becomes a 'fatal' message and a non-zero exit. The child
 * then exits explicitly, once its last message is out: a user's handler may hold connections or
 * timers open that would otherwise keep it alive.
 */
export function runWorker(main: () => Promise<void>): void {
  main().then(
    () => exitWhenSent(ExitCode.ok),
    (error: unknown) => {
      const exitCode = error instanceof JobqError ? error.exitCode : ExitCode.internal;
      const err = error instanceof Error ? error : new Error(String(error));
      report({ type: 'fatal', message: err.message, exitCode, ...(err.stack !== undefined && { stack: err.stack }) });
      exitWhenSent(exitCode);
    },
  );
}

function exitWhenSent(code: number): void {
  if (process.send === undefined || !process.connected) process.exit(code);
  process.send({ type: 'exiting' } satisfies ChildMessage, () => process.exit(code));
}
