/**
 * What the latency scenarios share: the time a job was sent, on a clock that processes on one
 * machine agree on to a fraction of a millisecond, and a producer that enqueues one job at a time
 * at a fixed rate.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobQueue } from '../../src/index.js';

/** Milliseconds since the epoch, with the fraction: performance.timeOrigin is this process's start on the wall clock. */
export const wallClockMs = (): number => performance.timeOrigin + performance.now();

/** Enqueues `rate` jobs a second, one at a time, for `seconds`, each carrying its send time (`sentAt`); a producer behind its schedule sends at once. Returns how many it sent. */
export async function pacedEnqueues(queue: JobQueue, seconds: number, rate: number): Promise<number> {
  const start = performance.now();
  let sent = 0;
  for (; ; sent++) {
    const due = start + (sent * 1000) / rate;
    if (due - start >= seconds * 1000) return sent;
    const ahead = due - performance.now();
    if (ahead > 0) await sleep(ahead);
    await queue.enqueue({ kind: 'bench', payload: { sentAt: wallClockMs() } });
  }
}
