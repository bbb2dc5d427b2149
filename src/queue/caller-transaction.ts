import { format } from 'mysql2';
import { ExitCode, JobqError } from '../errors.js';

/**
 * A transaction the caller opened, which jobq's inserts join: on the caller's own mysql2
 * connection, or through the ORM the application already uses. None of these libraries is a
 * dependency of jobq: each handle is recognised by its shape, and the two adapters that need their
 * library's own SQL builder (Kysely, Drizzle) import it from the application.
 *
 * Except on mysql2 (whose placeholders jobq uses as everywhere else), a statement's values are
 * escaped into its text by mysql2's `format`, as mysql2's `query()` itself does, and the text is
 * run through the ORM's way of running raw SQL: the ORMs disagree on placeholders (`?`, `$1`,
 * `??` for identifiers) and on how an array in `IN (?)` is sent.
 */
export type TransactionHandle =
  | Mysql2Connection
  | KnexTransaction
  | KyselyTransaction
  | DrizzleTransaction
  | TypeormEntityManager
  | TypeormQueryRunner
  | SequelizeTransaction
  | PrismaTransaction;

/** A mysql2 promise `Connection` or `PoolConnection` (mysql2's own types are the ones it has). */
export interface Mysql2Connection {
  query(sql: string, values?: unknown): Promise<[unknown, unknown]>;
  execute(...args: never[]): unknown;
}
/** The `trx` of `knex.transaction(async (trx) => ...)` (Knex on mysql2 or mysql). */
export interface KnexTransaction {
  (...args: never[]): unknown;
  raw(sql: string): PromiseLike<unknown>;
}
/** The `trx` of `db.transaction().execute(async (trx) => ...)` (Kysely's MysqlDialect). */
export interface KyselyTransaction {
  executeQuery(...args: never[]): unknown;
  selectFrom(...args: never[]): unknown;
}
/** The `tx` of `db.transaction(async (tx) => ...)` (Drizzle on mysql2). */
export interface DrizzleTransaction {
  select(...args: never[]): unknown;
  execute(...args: never[]): unknown;
  rollback(): unknown;
}
/** The `manager` of `dataSource.transaction(async (manager) => ...)` (TypeORM). */
export interface TypeormEntityManager {
  query(sql: string, parameters?: never[]): Promise<unknown>;
  getRepository(...args: never[]): unknown;
}
/** A TypeORM `QueryRunner` after `startTransaction()`. */
export interface TypeormQueryRunner {
  query(sql: string, parameters?: never[]): Promise<unknown>;
  readonly isTransactionActive: boolean;
}
/** A Sequelize `Transaction` (managed or unmanaged); its `sequelize`, not in Sequelize's types, runs the statements. */
export interface SequelizeTransaction {
  commit(): Promise<void>;
  rollback(): Promise<void>;
  afterCommit(...args: never[]): unknown;
}
/** The `tx` client of `prisma.$transaction(async (tx) => ...)` (Prisma with a MySQL or MariaDB adapter). */
export interface PrismaTransaction {
  $queryRawUnsafe(query: string, ...values: never[]): PromiseLike<unknown>;
  $executeRawUnsafe(query: string, ...values: never[]): PromiseLike<number>;
}

/** How jobq's inserts run in a caller's transaction: one statement at a time, with mysql2's result shapes. */
export interface CallerTransaction {
  /** Runs one statement: a SELECT answers its rows, any other statement `{ insertId, affectedRows }` at least. */
  query(sql: string, values: readonly unknown[]): Promise<unknown>;
  /** Whether a transaction is open, from the answer to a statement run just now (only mysql2 tells; an ORM's transaction is open). */
  isOpen(answer: unknown): boolean;
}

/** The server's status flag for "a transaction is open" (SERVER_STATUS_IN_TRANS in the protocol), in every OK packet. */
const SERVER_STATUS_IN_TRANS = 1;
const LIBRARIES = 'a mysql2 connection, or a transaction of Knex, Kysely, Drizzle, TypeORM, Sequelize or Prisma';

/**
 * The ORMs, each recognised by the methods its transaction handle has (checked in this order: a
 * Knex transaction is a function, and a Drizzle one has no `query` method, unlike mysql2's
 * connection, which comes last), and how a statement's text runs there.
 */
const ORMS: ReadonlyArray<{ recognises: (has: (method: string) => boolean, handle: Record<string, unknown>) => boolean; run: (handle: never) => (sql: string) => Promise<unknown> }> = [
  {
    recognises: (has, handle) => typeof handle === 'function' && has('raw'),
    run: (trx: KnexTransaction) => async (sql) => firstOf(await trx.raw(sql)),
  },
  {
    recognises: (has) => has('$executeRawUnsafe') && has('$queryRawUnsafe'),
    run: prismaStatement,
  },
  {
    recognises: (has) => has('executeQuery') && has('selectFrom'),
    run: (trx: KyselyTransaction) => async (sql) => {
      const { sql: kyselySql } = await optionalPeer<{ sql: { raw(sql: string): { execute(db: unknown): Promise<KyselyResult> } } }>('kysely');
      return kyselyAnswer(await kyselySql.raw(sql).execute(trx));
    },
  },
  {
    recognises: (has, handle) => has('commit') && has('afterCommit') && typeof handle.sequelize === 'object' && handle.sequelize !== null,
    run: (transaction: SequelizeTransaction) => async (sql) => {
      const { sequelize } = transaction as unknown as { sequelize: { query(sql: string, options: object): Promise<[unknown, unknown]> } };
      return sequelizeAnswer(await sequelize.query(sql, { transaction, type: 'RAW' }));
    },
  },
  {
    recognises: (has, handle) => has('query') && (has('getRepository') || typeof handle.isTransactionActive === 'boolean'),
    run: (manager: TypeormEntityManager) => (sql) => manager.query(sql),
  },
  {
    recognises: (has) => has('select') && has('execute') && has('rollback'),
    run: (tx: { execute(query: unknown): Promise<unknown> }) => async (sql) => {
      const { sql: drizzleSql } = await optionalPeer<{ sql: { raw(sql: string): unknown } }>('drizzle-orm');
      return firstOf(await tx.execute(drizzleSql.raw(sql)));
    },
  },
];

/** The caller's transaction behind `handle`, by its shape; a JobqError naming what jobq takes when it is none of them. */
export function callerTransaction(handle: TransactionHandle): CallerTransaction {
  const methods = handle as unknown as Record<string, unknown>;
  const has = (name: string) => typeof methods?.[name] === 'function';
  const orm = ORMS.find((candidate) => candidate.recognises(has, methods));
  if (orm !== undefined) {
    const run = orm.run(handle as never);
    // An ORM's transaction is open for as long as jobq is handed it.
    return { query: (sql, values) => run(format(sql, values as Parameters<typeof format>[1])), isOpen: () => true };
  }
  if (has('query') && has('execute')) {
    const connection = handle as Mysql2Connection;
    return {
      query: async (sql, values) => (await connection.query(sql, values))[0],
      isOpen: (answer) => ((answer as { serverStatus?: number }).serverStatus! & SERVER_STATUS_IN_TRANS) !== 0,
    };
  }
  throw new JobqError(`transaction: jobq takes ${LIBRARIES}; this is none of them`, ExitCode.usage);
}

/** Knex and Drizzle on mysql2 answer mysql2's `[rows or OK packet, fields]`. */
const firstOf = (answer: unknown) => (Array.isArray(answer) ? answer[0] : answer);

/** Sequelize answers `[insertId, affectedRows]` to what it takes for an INSERT, `[rows or OK packet, same]` to anything else. */
function sequelizeAnswer([first, second]: [unknown, unknown]): unknown {
  return typeof first === 'number' ? { insertId: first, affectedRows: second } : first;
}

interface KyselyResult {
  rows: unknown[];
  insertId?: bigint;
  numAffectedRows?: bigint;
}
/** Kysely answers `{ rows }` to a SELECT and adds the OK packet's figures, as bigints, to anything else. */
function kyselyAnswer(result: KyselyResult): unknown {
  if (result.insertId === undefined && result.numAffectedRows === undefined) return result.rows;
  return { insertId: Number(result.insertId ?? 0), affectedRows: Number(result.numAffectedRows ?? 0) };
}

const PREPARED_SAVEPOINT =
  "transaction: MySQL refuses SAVEPOINT as a prepared statement (error 1295), and Prisma's MariaDB adapter prepares every statement; enqueueing into a partitioned table needs it: create the adapter with new PrismaMariaDb(config, { useTextProtocol: true })";

/** Prisma reads rows with $queryRawUnsafe and runs anything else with $executeRawUnsafe, which answers a count only: the id comes from LAST_INSERT_ID() on the same connection. */
function prismaStatement(tx: PrismaTransaction): (sql: string) => Promise<unknown> {
  return async (sql) => {
    if (/^\s*SELECT\b/i.test(sql)) return tx.$queryRawUnsafe(sql);
    const affectedRows = await tx.$executeRawUnsafe(sql).then(undefined, (error: Error) => {
      if (!/Code: `1295`/.test(error.message)) throw error;
      throw new JobqError(PREPARED_SAVEPOINT, ExitCode.usage, { cause: error });
    });
    if (!/^\s*INSERT\b/i.test(sql)) return { insertId: 0, affectedRows };
    const [{ insertId }] = (await tx.$queryRawUnsafe('SELECT LAST_INSERT_ID() AS insertId')) as [{ insertId: bigint | number }];
    return { insertId: Number(insertId), affectedRows };
  };
}

/** A library the application brings (an optional peer of jobq), imported from the application. */
async function optionalPeer<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    throw new JobqError(`transaction: it looks like a ${name} transaction, but ${name} could not be imported (${(error as Error).message})`, ExitCode.usage);
  }
}
