import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PrismaMariaDb } from '@prisma/adapter-mariadb';
import { drizzle } from 'drizzle-orm/mysql2';
import knex from 'knex';
import { Kysely, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';
import mysql from 'mysql2/promise';
import { Sequelize } from 'sequelize';
import { DataSource } from 'typeorm';
import { JobQueue, type TransactionHandle } from '../src/index.js';
import { preparePrismaExample, type PrismaExample } from './helpers/prisma-client.js';
import { databaseForTests } from './helpers/queue-fixtures.js';
import { ON_MARIADB, serverConnectionOptions } from './helpers/test-database.js';

// Each ORM's own transaction, on its own connections to the test server: the jobs enqueued in it
// exist once each if it commits, not at all if it rolls back, and no other connection sees them
// before the commit. Each library is driven as its documentation shows.

/** An ORM opened on the test database: runs `work` in one of its transactions, committed unless `work` throws. */
interface Orm {
  inTransaction(work: (transaction: TransactionHandle) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

const ORMS: Record<string, (database: string) => Promise<Orm>> = {
  async knex(database) {
    const db = knex({ client: 'mysql2', connection: serverConnectionOptions(database) as object, pool: { min: 0, max: 2 } });
    return { inTransaction: (work) => db.transaction((trx) => work(trx)), close: () => db.destroy() };
  },
  async kysely(database) {
    const db = new Kysely<Record<string, never>>({ dialect: new MysqlDialect({ pool: createPool({ ...serverConnectionOptions(database), connectionLimit: 2 }) }) });
    return { inTransaction: (work) => db.transaction().execute((trx) => work(trx)), close: () => db.destroy() };
  },
  async drizzle(database) {
    const pool = mysql.createPool({ ...serverConnectionOptions(database), connectionLimit: 2 });
    const db = drizzle({ client: pool });
    return { inTransaction: (work) => db.transaction((tx) => work(tx)), close: () => pool.end() };
  },
  async 'typeorm EntityManager'(database) {
    const source = await typeormSource(database);
    return { inTransaction: (work) => source.transaction((manager) => work(manager)), close: () => source.destroy() };
  },
  async 'typeorm QueryRunner'(database) {
    const source = await typeormSource(database);
    return {
      async inTransaction(work) {
        const runner = source.createQueryRunner();
        await runner.connect();
        await runner.startTransaction();
        try {
          await work(runner);
          await runner.commitTransaction();
        } catch (error) {
          await runner.rollbackTransaction();
          throw error;
        } finally {
          await runner.release();
        }
      },
      close: () => source.destroy(),
    };
  },
  async sequelize(database) {
    const { host, port, user, password } = serverConnectionOptions(database);
    const sequelize = new Sequelize(database, user!, password, { host: host!, port: port!, dialect: 'mysql', logging: false, pool: { max: 2 } });
    return { inTransaction: (work) => sequelize.transaction((transaction) => work(transaction)), close: () => sequelize.close() };
  },
  // The text protocol: MySQL refuses SAVEPOINT (which inserts into the partitioned table send) prepared.
  prisma: (database) => prismaOrm(database, { useTextProtocol: true }),
};

let prismaExample: Promise<PrismaExample> | undefined;
/** Prisma on the test database, with the example's client (made once for the file) and the adapter's `options`. */
async function prismaOrm(database: string, options: { useTextProtocol: boolean }): Promise<Orm> {
  const { PrismaClient } = (await import((await (prismaExample ??= preparePrismaExample())).client)) as { PrismaClient: new (options: object) => PrismaClientLike };
  const { host, port, user, password } = serverConnectionOptions(database);
  const adapter = new PrismaMariaDb({ host: host!, port: port!, user: user!, password: password!, database, connectionLimit: 2 }, options);
  const prisma = new PrismaClient({ adapter });
  return { inTransaction: (work) => prisma.$transaction((tx) => work(tx)), close: () => prisma.$disconnect() };
}

/** What the test uses of the client that `prisma generate` makes (its types come with it, at run time). */
interface PrismaClientLike {
  $transaction(work: (tx: TransactionHandle & PrismaTransactionClient) => Promise<void>): Promise<void>;
  $disconnect(): Promise<void>;
}
type PrismaTransactionClient = Extract<TransactionHandle, { $queryRawUnsafe: unknown }>;

async function typeormSource(database: string): Promise<DataSource> {
  const { host, port, user, password } = serverConnectionOptions(database);
  return new DataSource({ type: 'mysql', host: host!, port: port!, username: user!, password: password!, database, poolSize: 2 }).initialize();
}

/** A queue on an unpartitioned table and one on a table in 4 partitions (whose inserts take jobq_job_keys' locks in the caller's transaction). */
const queues = new Map<string, JobQueue>();
const db = databaseForTests(
  async (made) => {
    for (const [name, partitions] of [['jobs', undefined], ['jobs_in_parts', 4]] as const) {
      const queue = await JobQueue.open({ url: made.url, table: name });
      await queue.setup(partitions === undefined ? {} : { partitions });
      queues.set(name, queue);
    }
  },
  async () => {
    for (const queue of queues.values()) await queue.close();
    (await prismaExample)?.remove();
  },
);

const jobsOf = async (table: string, kind: string) => (await db.rows<{ id: number }>(`SELECT id FROM ${table} WHERE kind = ? ORDER BY id`, [kind])).map((row) => Number(row.id));

class RolledBack extends Error {}

for (const [name, open] of Object.entries(ORMS)) {
  test(`${name}: committed, each job exists once, and no other connection saw it before; rolled back, none exists`, async () => {
    const orm = await open(db.name);
    try {
      for (const [table, queue] of queues) {
        const kind = `${name.replace(' ', '-')}-${table}`;
        const ids: number[] = [];
        await orm.inTransaction(async (transaction) => {
          ids.push(await queue.enqueue({ kind, payload: { n: 1, text: "it's a question?" } }, { transaction }));
          const many = await queue.enqueueMany([{ kind, payload: { n: 2 } }, { kind, payload: { n: 3 } }], { transaction });
          assert.equal(many.count, 2);
          ids.push(many.firstId!, many.lastId!);
          assert.deepEqual(await jobsOf(table, kind), [], `${table}: another connection sees none of the jobs before the commit`);
        });
        assert.deepEqual(await jobsOf(table, kind), ids, `${table}: the ids enqueue answered are the committed jobs'`);
        const [payload] = await db.rows<{ payload: string }>(`SELECT CAST(payload AS CHAR) AS payload FROM ${table} WHERE id = ?`, [ids[0]]);
        assert.deepEqual(JSON.parse(payload!.payload), { n: 1, text: "it's a question?" }, 'the payload is stored as sent');

        const rolledBack = `${kind}-rolled-back`;
        await assert.rejects(
          orm.inTransaction(async (transaction) => {
            await queue.enqueue({ kind: rolledBack }, { transaction });
            await queue.enqueueMany([{ kind: rolledBack }, { kind: rolledBack }], { transaction });
            throw new RolledBack();
          }),
          RolledBack,
        );
        assert.deepEqual(await jobsOf(table, rolledBack), [], `${table}: a rolled-back transaction leaves no job`);
      }
    } finally {
      await orm.close();
    }
  });
}

test('a transaction jobq does not know, or both transaction and connection: one line, nothing queued', async () => {
  const queue = queues.get('jobs')!;
  await assert.rejects(queue.enqueue({ kind: 'stray' }, { transaction: {} as TransactionHandle }), {
    name: 'JobqError',
    message: 'transaction: jobq takes a mysql2 connection, or a transaction of Knex, Kysely, Drizzle, TypeORM, Sequelize or Prisma; this is none of them',
  });
  const connection = await mysql.createConnection(serverConnectionOptions(db.name));
  try {
    await assert.rejects(queue.enqueue({ kind: 'stray' }, { transaction: connection, connection }), { name: 'JobqError', message: 'enqueue: give transaction or connection, not both' });
  } finally {
    await connection.end();
  }
  assert.deepEqual(await jobsOf('jobs', 'stray'), []);
});

test("Prisma's prepared statements on MySQL, into a partitioned table: one line says to use the text protocol, nothing queued", async (t) => {
  if (ON_MARIADB) return t.skip('MariaDB takes SAVEPOINT as a prepared statement');
  const orm = await prismaOrm(db.name, { useTextProtocol: false });
  try {
    await assert.rejects(
      orm.inTransaction((transaction) => queues.get('jobs_in_parts')!.enqueue({ kind: 'prepared' }, { transaction }).then(() => undefined)),
      { name: 'JobqError', message: /^transaction: MySQL refuses SAVEPOINT as a prepared statement \(error 1295\).* new PrismaMariaDb\(config, \{ useTextProtocol: true \}\)$/ },
    );
  } finally {
    await orm.close();
  }
  assert.deepEqual(await jobsOf('jobs_in_parts', 'prepared'), []);
});
