import { EVERY_KIND } from '../claim/sql/limits.js';
import type { HandlerAbort, RunResult } from './job-runner.js';

/** What a run that took too long fails with, and the reason its handler's signal fires with. */
export class JobTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
    this.name = 'JobTimeoutError';
  }
}

/**
 * A job's timeout: the job's own (`timeoutMs` at its enqueue), else its kind's in `queue.work`'s
 * `timeoutMs` (resolved), else that of every kind there, else none.
 */
export function timeoutFor(timeouts: Readonly<Record<string, number>>, { kind, timeoutMs }: { kind: string | null; timeoutMs: number | null }): number | undefined {
  if (timeoutMs !== null) return timeoutMs;
  if (kind !== null && Object.hasOwn(timeouts, kind)) return timeouts[kind];
  return Object.hasOwn(timeouts, EVERY_KIND) ? timeouts[EVERY_KIND] : undefined;
}

/**
 * A handler's run, bounded. After `timeoutMs` the handler's signal fires with a JobTimeoutError,
 * and a run that fails from then on fails with it (its own error is most likely the abort the
 * timeout set off); one that returns is done. A handler still running `graceMs` later is given up on: the
 * run fails with the timeout at once, and whatever the handler does after that is ignored.
 */
export async function runWithin(run: Promise<RunResult>, abort: HandlerAbort, timeoutMs: number, graceMs: number): Promise<RunResult> {
  const timedOut = new JobTimeoutError(timeoutMs);
  let timer: NodeJS.Timeout | undefined;
  const givenUp = new Promise<RunResult>((resolve) => {
    timer = setTimeout(() => {
      abort.abort(timedOut);
      timer = setTimeout(resolve, graceMs, { outcome: { ok: false, error: timedOut }, durationMs: timeoutMs + graceMs });
    }, timeoutMs);
  });
  try {
    const result = await Promise.race([run, givenUp]);
    return !result.outcome.ok && abort.reason === timedOut ? { ...result, outcome: { ok: false, error: timedOut } } : result;
  } finally {
    clearTimeout(timer);
  }
}
