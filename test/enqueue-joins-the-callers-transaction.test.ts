import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import mysql from 'mysql2/promise';
import { JobQueue } from '../src/index.js';
import { createTestDatabase, serverConnectionOptions, type TestDatabase } from './helpers/test-database.js';

let db: TestDatabase;
let queue: JobQueue;
let app: mysql.Pool;
before(async () => {
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
  await db.admin.query('CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(50) NOT NULL)');
  // The application's own pool, with no default database: jobq names its table in full.
  app = mysql.createPool({ ...serverConnectionOptions(), connectionLimit: 2 });
});
after(async () => {
  await app.end();
  await queue.close();
  await db.drop();
});

const jobsFor = (item: string) => db.rows("SELECT id FROM jobs WHERE JSON_VALUE(payload, '$.item') = ?", [item]);

test('rolled back: neither the order nor its job exists', async () => {
  const connection = await app.getConnection();
  try {
    await connection.beginTransaction();
    await connection.query(`INSERT INTO \`${db.name}\`.orders (item) VALUES ('lamp')`);
    await queue.enqueue({ kind: 'email', payload: { item: 'lamp' } }, { connection });
    await queue.enqueueMany([{ kind: 'invoice', payload: { item: 'lamp' } }], { connection });
    await connection.rollback();
  } finally {
    connection.release();
  }
  assert.equal((await jobsFor('lamp')).length, 0);
});

test('committed: exactly one job, invisible to other connections until the commit', async () => {
  const connection = await app.getConnection();
  try {
    await connection.beginTransaction();
    await connection.query(`INSERT INTO \`${db.name}\`.orders (item) VALUES ('desk')`);
    const id = await queue.enqueue({ kind: 'email', payload: { item: 'desk' } }, { connection });
    assert.ok(id > 0, 'the id comes back before the commit');
    assert.equal((await jobsFor('desk')).length, 0, 'another connection does not see it yet');
    assert.equal((await queue.claim({ batchSize: 10 })).jobs.length, 0, 'no worker can claim it yet');
    await connection.commit();
    assert.deepEqual((await jobsFor('desk')).map((row) => Number(row.id)), [id]);
  } finally {
    connection.release();
  }
});

test('enqueue returns the id in one statement; a key sent twice returns the same job', async () => {
  const first = await queue.enqueue({ kind: 'email', payload: { item: 'chair' }, key: 'order-17-email' });
  const again = await queue.enqueue({ kind: 'email', payload: { item: 'chair' }, key: 'order-17-email' });
  assert.equal(again, first);
  assert.equal((await jobsFor('chair')).length, 1);
});
