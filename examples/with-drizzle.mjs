import { sql } from 'drizzle-orm';
import { int, mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import { drizzle } from 'drizzle-orm/mysql2';
import mysql from 'mysql2/promise';
import { JobQueue } from 'jobq-mysql';

const orders = mysqlTable('orders', { id: int().primaryKey().autoincrement(), item: varchar({ length: 50 }).notNull() });
const pool = mysql.createPool(process.env.APP_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/test');
const db = drizzle({ client: pool });
const queue = await JobQueue.open({ createDatabase: true });
await queue.setup();
await db.execute(sql`CREATE TABLE IF NOT EXISTS orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(50) NOT NULL)`);

// The order and its email job commit together, or not at all.
await db.transaction(async (tx) => {
  const [{ id: orderId }] = await tx.insert(orders).values({ item: 'lamp' }).$returningId();
  const jobId = await queue.enqueue({ kind: 'email', payload: { orderId } }, { transaction: tx });
  console.log(`order ${orderId} and its email job ${jobId}`);
});

await queue.close();
await pool.end();
