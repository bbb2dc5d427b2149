import type { JobQueue } from '../job-queue.js';

const UNTIL_EMPTY_POLL_MS = 200;

export interface StopRules {
  durationSeconds?: number;
  /** Stop once the producers have ended and nothing is left to claim. */
  untilEmpty: boolean;
  /** With untilEmpty: only these kinds count (`work --kind`). */
  kinds?: string[];
  /** With untilEmpty: delayed jobs do not count (`work --once`). */
  ignoreDelayed?: boolean;
}

/**
 * Calls `stop` when a rule of the run says it is over: --duration has passed, or (--until-empty)
 * the producers have ended and the queue holds nothing more for these workers. Returns a function
 * that cancels the watching.
 */
export function watchStopRules(rules: StopRules, queue: JobQueue, producersDone: () => boolean, stop: () => void): () => void {
  const timers: NodeJS.Timeout[] = [];
  let cancelled = false;
  if (rules.durationSeconds !== undefined) timers.push(setTimeout(stop, rules.durationSeconds * 1000));
  if (rules.untilEmpty) {
    const { kinds } = rules;
    const poll = async () => {
      if (cancelled) return;
      const pending = await queue.hasPendingWork({ includeDelayed: !rules.ignoreDelayed, ...(kinds !== undefined && { kinds }) });
      if (producersDone() && !pending) return stop();
      schedule();
    };
    // A failed check (the connection dropped) is only tried again: the workers report their own trouble.
    const schedule = () => timers.push(setTimeout(() => void poll().catch(schedule), UNTIL_EMPTY_POLL_MS));
    void poll().catch(schedule);
  }
  return () => {
    cancelled = true;
    for (const timer of timers) clearTimeout(timer);
  };
}
