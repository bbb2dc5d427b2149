import { JobQueue } from '../job-queue.js';
import type { ConnectionOptions } from './options.js';
import { LineWriter } from './output.js';

/**
 * What every one-shot command does around its work: open the queue the flags name, refuse at
 * once with one line when its table is missing or of another shape, close it afterwards.
 */
export async function withReadyQueue<T>(options: ConnectionOptions, work: (queue: JobQueue, out: LineWriter) => Promise<T>): Promise<T> {
  const queue = await JobQueue.open({ url: options.databaseUrl, table: options.table });
  try {
    await queue.assertReady();
    return await work(queue, new LineWriter());
  } finally {
    await queue.close();
  }
}
