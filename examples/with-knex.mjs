import knex from 'knex';
import { JobQueue } from 'jobq-mysql';

const db = knex({ client: 'mysql2', connection: process.env.APP_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/test' });
const queue = await JobQueue.open({ createDatabase: true });
await queue.setup();
await db.raw('CREATE TABLE IF NOT EXISTS orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(50) NOT NULL)');

// The order and its email job commit together, or not at all.
await db.transaction(async (trx) => {
  const [orderId] = await trx('orders').insert({ item: 'lamp' });
  const jobId = await queue.enqueue({ kind: 'email', payload: { orderId } }, { transaction: trx });
  console.log(`order ${orderId} and its email job ${jobId}`);
});

await queue.close();
await db.destroy();
