import type { ConnectionEvent } from '../db/connection-events.js';
import type { Lane } from '../claim/types.js';
import type { WorkerOptions } from '../worker/options.js';
import type { WorkerCounters } from '../worker/worker.js';

/** What every child needs to connect. Sent over IPC, never on the command line: the URL may hold a password. */
export interface ChildConnection {
  url: string;
  table: string;
  /** A replica to read claim candidates from (its URL may hold a password too). */
  replica?: { url: string; maxLagSeconds: number };
}

/** A child's configuration, its first message: its role and number, and whatever its script reads. */
export interface ChildConfig extends ChildConnection {
  role: string;
  number: number;
  /** Jobs a producer inserts before it ends by itself; undefined = until stopped. A restarted one gets what is left. */
  quota?: number;
}

/** `jobq work --processes N`: one of N processes running `queue.work` with the user's handler module. */
export interface HandlerWorkerConfig extends ChildConfig {
  role: 'handler-worker';
  /** The handler module, an absolute path. */
  handler: string;
  /** Only these kinds (`--kind`). */
  kinds?: string[];
  options: WorkerOptions;
  /** Serve this process's metrics here (`--metrics-port`). */
  metrics?: { host: string; port: number };
}

/** Parent to child. */
export type ParentMessage =
  /** The first message: what to do. */
  | { type: 'config'; config: ChildConfig }
  | { type: 'stop' }
  /** Your turn to talk to the server, claiming from this lane first (see ClaimGate). */
  | { type: 'go'; lane?: Lane };

/** Child to parent. Counts travel per event, so a child killed with -9 loses none already sent. */
export type ChildMessage =
  | { type: 'inserted'; count: number }
  /**
   * One claim turn: the previous batch settled (deleted or marked done) and the next one claimed,
   * which happen in one transaction. `ids` is empty unless the child was asked for them.
   */
  | { type: 'cycle'; claimed: number; ids: number[]; candidates: number; failedIds: number[]; settled: number; lost: number }
  /** A handler worker's counters since its last report. */
  | { type: 'worked'; counters: WorkerCounters }
  | { type: 'job-failed'; id: number; attempt: number; maxAttempts: number; error: string; final: boolean }
  /** A handler worker cancelled a job it held (`jobq cancel`). */
  | { type: 'job-cancelled'; id: number }
  | { type: 'connection'; state: ConnectionEvent['state']; detail: string }
  /** A handler worker's `warning` event. */
  | { type: 'warning'; message: string }
  /** A handler worker serves its metrics at this URL. */
  | { type: 'metrics'; url: string }
  | { type: 'retries'; deadlocks: number; lockWaits: number }
  /** A child asks for a turn at the server, and says when it is over (see ClaimGate). */
  | { type: 'turn' }
  | { type: 'turn-done' }
  /** The last message: the child exits once it has gone out. */
  | { type: 'exiting' }
  | { type: 'fatal'; message: string; exitCode: number; stack?: string };

/** The environment variable in which the supervisor tells its workers its pid. */
export const SUPERVISOR_PID_ENV = 'JOBQ_SUPERVISOR_PID';
