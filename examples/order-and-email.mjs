import mysql from 'mysql2/promise';
import { JobQueue } from 'jobq-mysql';

// Your application's own pool; jobq's queue lives in database "jobq" on the same server.
const pool = mysql.createPool(process.env.APP_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/test');
const queue = await JobQueue.open({ createDatabase: true });
await queue.setup();
await pool.query('CREATE TABLE IF NOT EXISTS orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(50) NOT NULL)');

// The order and its confirmation email commit together, or not at all.
const connection = await pool.getConnection();
try {
  await connection.beginTransaction();
  const [order] = await connection.query('INSERT INTO orders (item) VALUES (?)', ['lamp']);
  await queue.enqueue({ kind: 'email', payload: { orderId: order.insertId, template: 'confirmation' } }, { connection });
  await connection.commit();
} catch (error) {
  await connection.rollback();
  throw error;
} finally {
  connection.release();
}

console.log((await queue.stats()).byKind.find((k) => k.kind === 'email')?.counts.unclaimed, 'email job waiting');
await queue.close();
await pool.end();
