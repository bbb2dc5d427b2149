import type { ConnectionSettings } from '../config/database-url.js';

// The workers of this process, by queue: an enqueue in the same process wakes them as soon as its
// jobs are committed, with no round trip and no poll to wait for. Workers in other processes find
// the jobs at their next poll (`pollIntervalMs`).

const wakesByQueue = new Map<string, Set<() => void>>();

/** A queue as this process tells it apart: its servers, database and table. */
export function queueIdentity(settings: ConnectionSettings, table: string): string {
  const where = settings.socketPath ?? settings.servers.map((server) => `${server.host}:${server.port}`).join(',');
  return `${where}/${settings.database}/${table}`;
}

/** Calls `wake` whenever this process enqueues due jobs into the queue; returns what ends that. */
export function wakeOnEnqueue(queue: string, wake: () => void): () => void {
  let wakes = wakesByQueue.get(queue);
  if (wakes === undefined) wakesByQueue.set(queue, (wakes = new Set()));
  wakes.add(wake);
  return () => {
    wakes.delete(wake);
    if (wakes.size === 0) wakesByQueue.delete(queue);
  };
}

/** Due jobs were committed into the queue: wakes this process's workers of it. */
export function wakeWorkers(queue: string): void {
  const wakes = wakesByQueue.get(queue);
  if (wakes !== undefined) for (const wake of wakes) wake();
}
