import { DataSource } from 'typeorm';
import { JobQueue } from 'jobq-mysql';

const source = await new DataSource({ type: 'mysql', url: process.env.APP_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/test' }).initialize();
const queue = await JobQueue.open({ createDatabase: true });
await queue.setup();
await source.query('CREATE TABLE IF NOT EXISTS orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(50) NOT NULL)');

// The order and its email job commit together, or not at all. A QueryRunner after
// startTransaction() does as well as the transaction's EntityManager.
await source.transaction(async (manager) => {
  const { insertId: orderId } = await manager.query('INSERT INTO orders (item) VALUES (?)', ['lamp']);
  const jobId = await queue.enqueue({ kind: 'email', payload: { orderId } }, { transaction: manager });
  console.log(`order ${orderId} and its email job ${jobId}`);
});

await queue.close();
await source.destroy();
