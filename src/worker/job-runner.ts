import { ExitCode, JobqError, JobSnoozed } from '../errors.js';
import { checkKind } from '../queue/new-jobs.js';
import type { Claim, ClaimedJob, Job, JobHandler } from '../queue/types.js';
import type { ClaimLoop } from '../claim/loop.js';
import type { ServerAddress } from '../config/database-url.js';
import type { JobSpans } from '../tracing/job-spans.js';
import { snoozeSeconds, tooManySnoozes } from './job-snooze.js';
import { keptJson, MAX_RESULT_BYTES } from './job-result.js';

// A job's run, from its handler's call to the outcome its claim loop settles, apart from the
// scheduling of runs (which job starts when), which is the worker's.

export interface ResolvedHandlers {
  /** The kinds to claim; undefined: any kind. */
  kinds?: string[];
  handlerFor(kind: string | null): JobHandler<Job> | undefined;
}

export function resolveHandlers(handlers: JobHandler<Job> | Record<string, JobHandler<Job> | undefined>): ResolvedHandlers {
  if (typeof handlers === 'function') return { handlerFor: () => handlers };
  if (typeof handlers !== 'object' || handlers === null) {
    throw new JobqError('work() takes a handler function, or an object of handlers by kind: { email: async (job) => ... }', ExitCode.usage);
  }
  const entries = Object.entries(handlers).filter(([, handler]) => handler !== undefined);
  if (entries.length === 0) throw new JobqError('work() got an empty handler map: name at least one kind', ExitCode.usage);
  for (const [kind, handler] of entries) {
    if (typeof handler !== 'function') throw new JobqError(`the handler for kind ${JSON.stringify(kind)} is not a function`, ExitCode.usage);
    checkKind(kind, 'work()');
  }
  const byKind = new Map(entries as Array<[string, JobHandler<Job>]>);
  return { kinds: [...byKind.keys()], handlerFor: (kind) => (kind === null ? undefined : byKind.get(kind)) };
}

export interface Held {
  job: ClaimedJob;
  claim: Claim;
  loop: ClaimLoop;
  /** Fires the handler's `signal`: a hard stop, or a lease that ran out. */
  abort: HandlerAbort;
  /** Seconds the handler put the job off by (`job.snooze`); undefined while it has not. */
  snoozeSeconds?: number;
  /** The job was cancelled while its handler ran (its signal fired with a JobCancelled). */
  cancelled?: boolean;
  /** When its handler was called (performance.now()); 0 until it is. */
  startedAt: number;
}

/**
 * A handler's abort signal, made when the handler first reads it or when it must fire: most
 * handlers never read it, and an AbortController per job is work on the drain's hot path.
 */
export class HandlerAbort {
  private controller: AbortController | undefined;

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  /** Fires the signal once, with this reason. */
  abort(reason: Error): void {
    if (!this.signal.aborted) this.controller!.abort(reason);
  }

  /** The reason the signal fired with; undefined while it has not. */
  get reason(): unknown {
    return this.controller?.signal.aborted ? this.controller.signal.reason : undefined;
  }
}

/** What came of a handler's run. */
export type Outcome = { ok: true; result: unknown } | { ok: false; error: unknown };

/** Where a worker runs handlers: in a consumer span each when the application traces. */
export interface RunTracing {
  spans: JobSpans;
  server: ServerAddress;
}

/** What came of a handler's run, and how long it took. */
export interface RunResult {
  outcome: Outcome;
  durationMs: number;
}

/** The job as its handler sees it; `onProgress` takes its `job.progress` reports. */
export function jobView(held: Held, onProgress: (held: Held, value: unknown) => void): Job {
  const { job } = held;
  return {
    id: job.id,
    kind: job.kind,
    payload: job.payload,
    attempts: job.attempts,
    group: job.group,
    get signal() {
      return held.abort.signal;
    },
    snooze(seconds: number) {
      held.snoozeSeconds = snoozeSeconds(seconds);
      return new JobSnoozed(held.snoozeSeconds);
    },
    progress(value: unknown) {
      onProgress(held, value);
    },
  };
}

/** Runs the job's handler on `view`. */
export async function runHandler(handlers: ResolvedHandlers, held: Held, view: Job, tracing: RunTracing | undefined): Promise<RunResult> {
  const { job } = held;
  let outcome: Outcome;
  const started = performance.now();
  try {
    const handler = handlers.handlerFor(job.kind);
    if (handler === undefined) throw new Error(`no handler for kind ${JSON.stringify(job.kind)}`);
    const traced = tracing !== undefined && tracing.spans.enabled;
    outcome = { ok: true, result: traced ? await tracing.spans.process(job, tracing.server, async () => handler(view)) : await handler(view) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  return { outcome, durationMs: performance.now() - started };
}

/** What became of a run, as the worker counts it. */
export type Settled = 'lost' | 'completed' | 'retried' | 'failed' | 'snoozed' | 'cancelled';

/**
 * Hands the outcome to the job's claim loop, which settles it in its next turn: completed (with
 * its result, when `keepResults`), failed (retried later, or for good once its attempts are used
 * up), snoozed (put off, or failed once snoozed `maxSnoozes` times already), whatever the run's
 * outcome, when the handler asked for it (`job.snooze`, or a JobSnoozed thrown), or cancelled,
 * when a cancel came while it ran and it did not complete. A job whose lease ran out while its
 * handler ran is `lost`: another worker may have it by now. Its outcome is still sent, guarded by
 * the claim's token: if nobody took the job meanwhile, it is settled and not run again. The
 * outcome, with the error the job failed with, or the seconds it was put off by.
 */
export function settleOutcome(
  { job, claim, loop, snoozeSeconds: asked, cancelled }: Held,
  outcome: Outcome,
  limits: { maxAttempts: number; maxSnoozes: number; keepResults: boolean },
): { settled: Settled; error?: unknown; seconds?: number } {
  const leaseLost = loop.leaseLost(claim);
  if (cancelled === true && (!outcome.ok || asked !== undefined)) {
    loop.cancel(claim, [job.id]);
    return { settled: leaseLost ? 'lost' : 'cancelled' };
  }
  if (outcome.ok && asked === undefined && limits.keepResults) {
    let result: string | undefined;
    try {
      result = keptJson(outcome.result, `the result of job ${job.id}`, MAX_RESULT_BYTES);
    } catch (error) {
      loop.fail(claim, job.id, error, { forGood: true });
      return { settled: leaseLost ? 'lost' : 'failed', error };
    }
    loop.complete(claim, job.id, result);
    return { settled: leaseLost ? 'lost' : 'completed' };
  }
  const snooze = asked ?? (!outcome.ok && outcome.error instanceof JobSnoozed ? outcome.error.seconds : undefined);
  if (snooze !== undefined) {
    if (job.snoozes < limits.maxSnoozes) {
      loop.snooze(claim, job.id, snooze);
      return { settled: leaseLost ? 'lost' : 'snoozed', seconds: snooze };
    }
    const error = tooManySnoozes(limits.maxSnoozes);
    loop.fail(claim, job.id, error, { forGood: true });
    return { settled: leaseLost ? 'lost' : 'failed', error };
  }
  if (outcome.ok) loop.complete(claim, job.id);
  else loop.fail(claim, job.id, outcome.error);
  if (leaseLost) return { settled: 'lost' };
  if (outcome.ok) return { settled: 'completed' };
  return { settled: job.attempts >= limits.maxAttempts ? 'failed' : 'retried', error: outcome.error };
}
