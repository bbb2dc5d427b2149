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

/**
 * A database of its own for a test file: made (and `prepare`d) before the file's first test and
 * dropped (after `finish`) after its last. What it returns stands for that database from the first
 * test on. One hook of each kind: Node 20 starts a top-level `before` hook as soon as it is
 * registered, so that two of them would run at once.
 */
export function databaseForTests(prepare?: (db: TestDatabase) => Promise<unknown>, finish?: () => Promise<unknown>): TestDatabase {
  let made: TestDatabase | undefined;
  before(async () => {
    made = await createTestDatabase();
    await prepare?.(made);
  });
  after(async () => {
    await finish?.();
    await made?.drop();
  });
  return new Proxy({} as TestDatabase, {
    get(_, key) {
      if (made === undefined) throw new Error('the test database is made before the first test');
      return Reflect.get(made, key);
    },
  });
}

/** A database of its own with a set-up jobs table and a queue on it, for a test file; dropped after. */
export function queueForTests(): { readonly db: TestDatabase; readonly queue: JobQueue } {
  const context = {} as { db: TestDatabase; queue: JobQueue };
  context.db = databaseForTests(
    async (db) => {
      context.queue = await JobQueue.open(db.url);
      await context.queue.setup();
    },
    async () => context.queue?.close(),
  );
  return context;
}
