import type { Pick } from '../queue/types.js';
import type { Lane } from './claim-gate.js';

/** What every worker child needs to connect. */
export interface WorkerConnection {
  url: string;
  table: string;
}

export interface GeneratorConfig extends WorkerConnection {
  role: 'generator';
  number: number;
  commitEvery: number;
  /** Jobs this generator inserts before it exits; undefined = until stopped. */
  quota?: number;
}

export interface ConsumerConfig extends WorkerConnection {
  role: 'consumer';
  number: number;
  batchSize: number;
  pick: Pick;
  workMs: number;
  keepDone: boolean;
  leaseSeconds: number;
  maxAttempts: number;
  /** The user's module (absolute path) that processes jobs; without it, --work-ms simulates work. */
  handler?: string;
  /** Jobs of one claim the handler may run at once. */
  concurrency: number;
  /** Claim only jobs of this kind. */
  kind?: string;
  /** First retry delay after a handler failure; doubles per attempt. */
  retryDelayMs: number;
  /** Send each claim's ids (for the claim lines); off with --quiet, which only needs counts. */
  reportIds: boolean;
}

export type WorkerConfig = GeneratorConfig | ConsumerConfig;

/** Parent to child. */
export type ParentMessage =
  | { type: 'stop' }
  /** Your turn to talk to the server, claiming from this lane first (see ClaimGate). */
  | { type: 'go'; lane: Lane };

/** Child to parent. Counts travel per event, so a child killed with -9 loses none already sent. */
export type ChildMessage =
  | { type: 'inserted'; count: number }
  /**
   * One turn of a consumer: the previous batch settled (deleted or marked done) and the next one
   * claimed, which happen in one transaction. `ids` is empty unless the supervisor asked for them.
   */
  | { type: 'cycle'; claimed: number; ids: number[]; candidates: number; failedIds: number[]; settled: number; lost: number }
  | { type: 'job-failed'; id: number; attempt: number; error: string; final: boolean }
  | { type: 'connection'; state: 'lost' | 'restored'; detail: string }
  | { type: 'retries'; deadlocks: number; lockWaits: number }
  /** A consumer asks for a turn at the server, and says when it is over (see ClaimGate). */
  | { type: 'turn' }
  | { type: 'turn-done' }
  /** The last message: the child exits once it has gone out. */
  | { type: 'exiting' }
  | { type: 'fatal'; message: string; exitCode: number; stack?: string };

/** The environment variable in which the supervisor tells its workers its pid. */
export const SUPERVISOR_PID_ENV = 'JOBQ_SUPERVISOR_PID';
