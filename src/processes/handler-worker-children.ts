import { fileURLToPath } from 'node:url';
import type { WorkerOptions } from '../worker/options.js';
import { childConnection, type ChildSpec } from './child-spec.js';
import type { ChildConnection, HandlerWorkerConfig } from './messages.js';

const SCRIPT = fileURLToPath(new URL('./handler-worker.js', import.meta.url));

/** `jobq work --processes N`: what each of the N processes runs. */
export interface HandlerWorkers {
  count: number;
  /** The handler module, an absolute path. */
  handler: string;
  /** Only these kinds (`--kind`, or the keys of a handler map). */
  kinds?: string[];
  options: WorkerOptions;
  /** Process N serves its metrics on port + N - 1 (each on any free one for port 0). */
  metrics?: { host: string; port: number };
}

/** One child per process, each running `queue.work` with the handler module. */
export function handlerWorkerChildren(connection: ChildConnection, workers: HandlerWorkers): ChildSpec[] {
  const { handler, kinds, options, metrics } = workers;
  return Array.from({ length: workers.count }, (_, i): ChildSpec => {
    const number = i + 1;
    const config: HandlerWorkerConfig = {
      role: 'handler-worker',
      number,
      ...childConnection(connection, number),
      handler,
      ...(kinds !== undefined && { kinds }),
      options,
      ...(metrics !== undefined && { metrics: { host: metrics.host, port: metrics.port === 0 ? 0 : metrics.port + i } }),
    };
    return { name: `worker ${number}`, script: SCRIPT, config };
  });
}
