import { after } from 'node:test';
import { JobQueue } from '../src/index.js';
import { queueContract } from './helpers/queue-contract.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

// The queue contract on the test server, with the table as setup-tables makes it and partitioned
// on id. The Galera and Group Replication files run it on their clusters.

const databases: TestDatabase[] = [];
after(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

/** A database of its own with a set-up table, partitioned in `partitions` when given. */
const freshQueue = (partitions?: number) => async () => {
  const db = await createTestDatabase();
  databases.push(db);
  const queue = await JobQueue.open(db.url);
  try {
    await queue.setup(partitions === undefined ? {} : { partitions });
  } finally {
    await queue.close();
  }
  return [db.url];
};

queueContract('one server', { unavailable: () => undefined, freshQueue: freshQueue() });
queueContract('a table in 4 partitions', { unavailable: () => undefined, freshQueue: freshQueue(4), partitioned: true });
