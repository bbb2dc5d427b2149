import { Kysely, MysqlDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import { JobQueue } from 'jobq-mysql';

const pool = createPool(process.env.APP_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/test');
const db = new Kysely({ dialect: new MysqlDialect({ pool }) });
const queue = await JobQueue.open({ createDatabase: true });
await queue.setup();
await sql`CREATE TABLE IF NOT EXISTS orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(50) NOT NULL)`.execute(db);

// The order and its email job commit together, or not at all.
await db.transaction().execute(async (trx) => {
  const { insertId } = await trx.insertInto('orders').values({ item: 'lamp' }).executeTakeFirstOrThrow();
  const jobId = await queue.enqueue({ kind: 'email', payload: { orderId: Number(insertId) } }, { transaction: trx });
  console.log(`order ${insertId} and its email job ${jobId}`);
});

await queue.close();
await db.destroy();
