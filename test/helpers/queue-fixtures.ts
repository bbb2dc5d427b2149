import { JobQueue } from '../../src/index.js';

/** Sets up the jobs table in `url` and queues `count` article-style jobs in chunks. */
export async function prefill(url: string, count: number, table = 'jobs'): Promise<void> {
  const queue = await JobQueue.open({ url, table });
  try {
    await queue.setup();
    for (let done = 0; done < count; done += 1000) {
      await queue.enqueueMany(Array.from({ length: Math.min(1000, count - done) }, () => ({})));
    }
  } finally {
    await queue.close();
  }
}
