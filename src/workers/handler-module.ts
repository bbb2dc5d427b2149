import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ExitCode, JobqError } from '../errors.js';
import type { ClaimedJob } from '../queue/types.js';

/** A user's job code, as `jobq work --handler` loads it. */
export type Handler =
  | { kind: 'per-job'; run: (job: ClaimedJob) => unknown }
  | { kind: 'batch'; run: (jobs: ClaimedJob[]) => unknown };

/**
 * Loads an ES module or CommonJS file: its named export `handleBatch(jobs)` if there is one,
 * else its default export `(job) => ...`. Anything else is a one-line usage error.
 */
export async function loadHandler(path: string): Promise<Handler> {
  const absolute = resolve(path);
  if (!existsSync(absolute)) throw new JobqError(`cannot load handler ${JSON.stringify(path)}: no such file (${absolute})`, ExitCode.usage);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    throw new JobqError(`cannot load handler ${JSON.stringify(path)}: ${(error as Error).message.split('\n')[0]}`, ExitCode.usage, { cause: error });
  }
  // CommonJS arrives as { default: module.exports }, with named exports copied where Node sees them.
  const exported = module.default as Record<string, unknown> | ((job: ClaimedJob) => unknown) | undefined;
  const batch = module.handleBatch ?? (typeof exported === 'object' && exported !== null ? exported.handleBatch : undefined);
  if (typeof batch === 'function') return { kind: 'batch', run: batch as (jobs: ClaimedJob[]) => unknown };
  if (typeof exported === 'function') return { kind: 'per-job', run: exported };
  throw new JobqError(
    `handler ${JSON.stringify(path)} exports neither a default function (async (job) => ...) nor handleBatch(jobs)`,
    ExitCode.usage,
  );
}

/** What running a claim's jobs through the handler came to: the jobs that threw, with their errors. */
export async function runHandler(handler: Handler, jobs: readonly ClaimedJob[], concurrency: number): Promise<Map<number, unknown>> {
  const failures = new Map<number, unknown>();
  if (handler.kind === 'batch') {
    try {
      await handler.run([...jobs]);
    } catch (error) {
      for (const job of jobs) failures.set(job.id, error);
    }
    return failures;
  }
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      try {
        await handler.run(job);
      } catch (error) {
        failures.set(job.id, error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, lane));
  return failures;
}
