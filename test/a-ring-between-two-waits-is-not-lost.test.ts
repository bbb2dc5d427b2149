import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { parseDatabaseUrl } from '../src/config/database-url.js';
import { Database } from '../src/db/database.js';
import { insertTarget } from '../src/queue/enqueue.js';
import { Doorbell } from '../src/wake-ups/doorbell.js';
import { waitStatement } from '../src/wake-ups/sql.js';
import { createTestDatabase, ON_MARIADB, type TestDatabase } from './helpers/test-database.js';
import { waitUntil } from './helpers/wait.js';

// A producer's KILL QUERY that reaches a worker's wait connection between two waits ends nothing.
// The wait that follows answers at once for any job newer than the last it told of, so the job
// whose ring was lost is not left for a later turn. Here the test is the producers: it commits a
// job without ringing (its ring lost), then rings as another producer's commit would.

let db: TestDatabase;
let queue: JobQueue;
let via: Database;

before(async () => {
  db = await createTestDatabase();
  queue = await JobQueue.open(db.url);
  await queue.setup();
  via = await Database.open({ settings: parseDatabaseUrl(db.url) });
});
after(async () => {
  await via.close();
  await queue.close();
  await db.drop();
});

const PROCESS_LIST = ON_MARIADB ? 'information_schema.PROCESSLIST' : 'performance_schema.processlist';

test('a job committed while the wait slept, its ring lost: the next ring wakes the worker, the wait after it answers at once with that job, and the one after sleeps', async () => {
  const wait = waitStatement(db.name, insertTarget(db.name, 'jobs'));
  let connectionId: number | undefined;
  const rings: Array<number | undefined> = [];
  const doorbell = new Doorbell(() => Database.open({ settings: parseDatabaseUrl(db.url) }), wait, {
    waitsOn: (id) => {
      connectionId = id;
      return () => undefined;
    },
    unavailable: (message) => assert.fail(message),
  });
  doorbell.subscribe((newest) => rings.push(newest));
  const sleeping = async () => (await db.rows('SELECT 1 FROM ' + PROCESS_LIST + ' WHERE ID = ? AND INFO = ?', [connectionId ?? 0, wait.sleeping])).length === 1;
  try {
    doorbell.idle();
    await waitUntil(sleeping, 'the doorbell sleeps in its wait');
    // The table was empty: the first wait slept at once.
    assert.deepEqual(rings, []);

    // Enqueued in a transaction of the caller's, which jobq does not see commit: no ring.
    await db.admin.beginTransaction();
    const id = await queue.enqueue({ kind: 'lost-ring' }, { connection: db.admin });
    await db.admin.commit();
    doorbell.idle();
    await db.admin.query('KILL QUERY ?', [connectionId]);
    await waitUntil(() => rings.length >= 2, 'the wait after the ring answered');
    assert.deepEqual(rings, [undefined, id], 'the ring, then the job it was not for');

    await waitUntil(sleeping, 'the doorbell sleeps again');
    assert.deepEqual(rings, [undefined, id], 'no second answer for the same job');
  } finally {
    doorbell.close(via);
  }
});
