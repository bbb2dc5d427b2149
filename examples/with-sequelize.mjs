import { DataTypes, Sequelize } from 'sequelize';
import { JobQueue } from 'jobq-mysql';

const sequelize = new Sequelize(process.env.APP_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/test', { logging: false });
const Order = sequelize.define('Order', { item: { type: DataTypes.STRING(50), allowNull: false } }, { tableName: 'orders', timestamps: false });
const queue = await JobQueue.open({ createDatabase: true });
await queue.setup();
await Order.sync();

// The order and its email job commit together, or not at all.
await sequelize.transaction(async (transaction) => {
  const order = await Order.create({ item: 'lamp' }, { transaction });
  const jobId = await queue.enqueue({ kind: 'email', payload: { orderId: order.id } }, { transaction });
  console.log(`order ${order.id} and its email job ${jobId}`);
});

await queue.close();
await sequelize.close();
