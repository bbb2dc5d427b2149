import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { JobQueue, type ConnectionEvent } from '../src/index.js';
import { createTestDatabase, SERVER_URL, type TestDatabase } from './helpers/test-database.js';
import { TcpProxy } from './helpers/tcp-proxy.js';
import { waitUntil } from './helpers/wait.js';

// The server is reached through a proxy that the tests cut, as a server that goes away would be.
let db: TestDatabase;
let proxy: TcpProxy;
let queue: JobQueue;
before(async () => {
  db = await createTestDatabase();
  proxy = new TcpProxy(SERVER_URL);
  await proxy.start();
  queue = await JobQueue.open({ url: proxy.url(db.name), reconnect: true });
  await queue.setup();
});
after(async () => {
  await proxy.restore();
  await queue.close();
  await proxy.cut();
  await db.drop();
});

test('a worker started while the server is down waits for it, says so, and then works', async () => {
  await queue.enqueueMany(Array.from({ length: 20 }, () => ({ kind: 'outage' })));
  await proxy.cut();
  const events: Array<ConnectionEvent['state']> = [];
  let handled = 0;
  const worker = queue.work(async () => void handled++);
  worker.on('connection', (event) => events.push(event.state));
  await waitUntil(() => events.includes('lost'), 'the worker says the server is down');
  await proxy.restore();
  await waitUntil(() => handled === 20, 'the worker handles the jobs once the server is back');
  assert.equal(events[0], 'lost');
  assert.ok(events.includes('restored'), `events: ${events.join(', ')}`);
  await worker.stop();
});

test('stop() while the server is down returns within a bound and says what it left to the leases', async () => {
  await db.admin.query('DELETE FROM jobs');
  await queue.enqueueMany(Array.from({ length: 5 }, () => ({ kind: 'outage' })));
  let release = () => undefined as void;
  const running = new Promise<void>((resolve) => (release = resolve));
  let started = 0;
  const worker = queue.work(async () => {
    started++;
    await running;
  });
  const warnings: string[] = [];
  worker.on('warning', ({ message }) => warnings.push(message));
  await waitUntil(() => started === 5, 'the handlers run');
  await proxy.cut();
  const stopping = performance.now();
  const stopped = worker.stop();
  release(); // the handlers finish, but their jobs cannot be settled
  await stopped;
  const tookMs = performance.now() - stopping;
  assert.ok(tookMs < 15_000, `stop() returned after ${Math.round(tookMs)} ms`);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^the database did not answer within 5 s of the stop; 5 jobs left unsettled go back to the queue when their lease runs out$/);
  await proxy.restore();
  const rows = await db.rows<{ status: string }>('SELECT status FROM jobs');
  assert.deepEqual(rows.map((row) => row.status), Array(5).fill('claimed'), 'the jobs wait for their lease, nothing is lost');
});
