import { after, before } from 'node:test';
import { JobQueue } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

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

/** A database of its own with a set-up jobs table and a queue on it, for a test file; dropped after. */
export function queueForTests(): { readonly db: TestDatabase; readonly queue: JobQueue } {
  const context = {} as { db: TestDatabase; queue: JobQueue };
  before(async () => {
    context.db = await createTestDatabase();
    context.queue = await JobQueue.open(context.db.url);
    await context.queue.setup();
  });
  after(async () => {
    await context.queue.close();
    await context.db.drop();
  });
  return context;
}
