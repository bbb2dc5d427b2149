import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ExitCode, JobqError } from '../errors.js';
import type { HandlerMap, Job, JobHandler } from '../queue/types.js';

/** A user's job code, as `jobq work --handler` loads it: what `queue.work` takes. */
export type LoadedHandlers = JobHandler<Job> | HandlerMap<Record<string, unknown>>;

/**
 * Loads an ES module or CommonJS file whose default export is `async (job) => ...` (every kind)
 * or an object of such functions by kind (only those kinds are claimed). Anything else is a
 * one-line usage error.
 */
export async function loadHandlers(path: string): Promise<LoadedHandlers> {
  const absolute = resolve(path);
  if (!existsSync(absolute)) throw new JobqError(`cannot load handler ${JSON.stringify(path)}: no such file (${absolute})`, ExitCode.usage);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    throw new JobqError(`cannot load handler ${JSON.stringify(path)}: ${(error as Error).message.split('\n')[0]}`, ExitCode.usage, { cause: error });
  }
  // CommonJS arrives as { default: module.exports }.
  const exported = module.default;
  if (typeof exported === 'function') return exported as JobHandler<Job>;
  if (typeof exported === 'object' && exported !== null && Object.values(exported).length > 0 && Object.values(exported).every((value) => typeof value === 'function')) {
    return exported as HandlerMap<Record<string, unknown>>;
  }
  throw new JobqError(
    `handler ${JSON.stringify(path)} must export default async (job) => ..., or an object of such functions by kind ({ email: async (job) => ... })`,
    ExitCode.usage,
  );
}
