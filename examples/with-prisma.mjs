// Needs its client first: npx prisma generate --schema examples/prisma/schema.prisma
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { JobQueue } from 'jobq-mysql';
import { PrismaClient } from './prisma/generated/client.js';

// Prisma's MariaDB adapter serves MySQL too.
const prisma = new PrismaClient({ adapter: new PrismaMariaDb(process.env.APP_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/test') });
const queue = await JobQueue.open({ createDatabase: true });
await queue.setup();
await prisma.$executeRawUnsafe('CREATE TABLE IF NOT EXISTS orders (id INT AUTO_INCREMENT PRIMARY KEY, item VARCHAR(50) NOT NULL)');

// The order and its email job commit together, or not at all.
await prisma.$transaction(async (tx) => {
  const order = await tx.order.create({ data: { item: 'lamp' } });
  const jobId = await queue.enqueue({ kind: 'email', payload: { orderId: order.id } }, { transaction: tx });
  console.log(`order ${order.id} and its email job ${jobId}`);
});

await queue.close();
await prisma.$disconnect();
