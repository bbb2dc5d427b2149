import type { ConnectionSettings } from '../config/database-url.js';

// The workers of this process, by queue: an enqueue in the same process wakes them as soon as its
// jobs are committed, with no round trip. The connections their doorbells wait on are listed too:
// this process's ringers leave them alone, since the call reaches them sooner.

interface LocalWorkers {
  wakes: Set<() => void>;
  waitConnections: Set<number>;
}

const byQueue = new Map<string, LocalWorkers>();

/** A queue as this process tells it apart: its servers, database and table. */
export function queueIdentity(settings: ConnectionSettings, table: string): string {
  const where = settings.socketPath ?? settings.servers.map((server) => `${server.host}:${server.port}`).join(',');
  return `${where}/${settings.database}/${table}`;
}

function workersOf(queue: string): LocalWorkers {
  let workers = byQueue.get(queue);
  if (workers === undefined) byQueue.set(queue, (workers = { wakes: new Set(), waitConnections: new Set() }));
  return workers;
}

function forgetIfUnused(queue: string, workers: LocalWorkers): void {
  if (workers.wakes.size === 0 && workers.waitConnections.size === 0) byQueue.delete(queue);
}

/** Calls `wake` whenever this process enqueues due jobs into the queue; returns what ends that. */
export function wakeOnEnqueue(queue: string, wake: () => void): () => void {
  const workers = workersOf(queue);
  workers.wakes.add(wake);
  return () => {
    workers.wakes.delete(wake);
    forgetIfUnused(queue, workers);
  };
}

/** A worker of this process waits for rings on this connection (doorbell.ts); returns what ends that. */
export function waitsOnConnection(queue: string, connectionId: number): () => void {
  const workers = workersOf(queue);
  workers.waitConnections.add(connectionId);
  return () => {
    workers.waitConnections.delete(connectionId);
    forgetIfUnused(queue, workers);
  };
}

/** The connections this process's own workers of the queue wait on. */
export function localWaitConnections(queue: string): ReadonlySet<number> {
  return byQueue.get(queue)?.waitConnections ?? new Set();
}

/** Due jobs were committed into the queue: wakes this process's workers of it. */
export function wakeLocalWorkers(queue: string): void {
  const workers = byQueue.get(queue);
  if (workers !== undefined) for (const wake of workers.wakes) wake();
}
