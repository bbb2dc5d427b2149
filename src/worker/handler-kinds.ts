import { ExitCode, JobqError } from '../errors.js';
import { checkKind } from '../queue/new-jobs.js';
import type { HandlerMap, Job, JobHandler } from '../queue/types.js';

type Handlers = JobHandler<Job> | HandlerMap<Record<string, unknown>>;

/**
 * The handlers narrowed to some kinds (`jobq work --kind`): a function becomes a map of those
 * kinds to it; a map keeps only those kinds, each of which it must have.
 */
export function onlyKinds(handlers: Handlers, kinds: readonly string[] | undefined): Handlers {
  if (kinds === undefined || kinds.length === 0) return handlers;
  for (const kind of kinds) checkKind(kind, '--kind');
  if (typeof handlers === 'function') return Object.fromEntries(kinds.map((kind) => [kind, handlers]));
  const missing = kinds.filter((kind) => typeof handlers[kind] !== 'function');
  if (missing.length > 0) {
    throw new JobqError(`the handler module has no handler for kind ${missing.map((k) => JSON.stringify(k)).join(', ')}; it handles ${Object.keys(handlers).join(', ')}`, ExitCode.usage);
  }
  return Object.fromEntries(kinds.map((kind) => [kind, handlers[kind]]));
}
