import { randomBytes } from 'node:crypto';
import type { Connection as CallerConnection, PoolConnection as CallerPoolConnection } from 'mysql2/promise';
import { ExitCode, JobqError } from '../errors.js';
import { callerTransaction, type CallerTransaction, type TransactionHandle } from './caller-transaction.js';
import { quoteIdentifier, type QuotedIdentifier } from '../config/identifiers.js';
import type { Database } from '../db/database.js';
import type { Statement } from '../db/transaction.js';
import { isDuplicateKey } from '../db/server-errors.js';
import { idRange, KeyedInsert, type IdRange } from './keyed-insert.js';
import { indexKeyOf, windowOf, type JobRow } from './new-jobs.js';
import * as uniqueSql from './sql/unique-jobs.js';
import { ID_RANGE_OF_KEYS_SQL, insertJobsSql, insertOneJobSql, insertValues } from './sql/enqueue.js';
import { countNewJobs, NEW_JOBS_TABLE, newMarker } from './new-job-count.js';
import { UNCOUNTED_UP_TO } from './uncounted-jobs.js';
import { RENEW_WRITER_LEASE_SQL, WRITER_LEASE_MARGIN_MS, WRITER_LEASE_MS } from './sql/uncounted-jobs.js';
import { addGroupedKindsSql } from '../claim/sql/groups.js';
import { listKindsSql } from '../claim/sql/counters.js';
import * as keySql from './sql/job-keys.js';
import type { EnqueueResult } from './types.js';
import { loadJobSpans } from '../tracing/job-spans.js';

/**
 * Where an enqueue runs. By default on the queue's own connection, committed at once. With
 * `transaction`, inside the caller's transaction: jobq neither commits nor rolls back, so the job
 * exists only if the caller commits, and no other connection sees it before.
 */
export interface EnqueueOptions {
  /**
   * The caller's open transaction: a mysql2 (promise API) connection, or the transaction of
   * Knex, Kysely, Drizzle (mysql2), TypeORM (an EntityManager or a QueryRunner), Sequelize or
   * Prisma (see {@link TransactionHandle}).
   */
  transaction?: TransactionHandle;
  /** A mysql2 (promise API) connection, inside whatever transaction is open there: the same as `transaction` with a mysql2 connection. */
  connection?: CallerConnection | CallerPoolConnection;
}

/** The caller's transaction that `options` name, if any. */
function callerOf(options: EnqueueOptions): CallerTransaction | undefined {
  if (options.transaction !== undefined && options.connection !== undefined) throw new JobqError('enqueue: give transaction or connection, not both', ExitCode.usage);
  const handle = options.transaction ?? options.connection;
  return handle === undefined ? undefined : callerTransaction(handle);
}

// One INSERT per chunk: at most this many rows, and about this many bytes, well under the
// servers' default max_allowed_packet (16 MiB in MariaDB, 64 MiB in MySQL).
const CHUNK_ROWS = 1000;
const CHUNK_BYTES = 4 * 1024 * 1024;
/** Tries of an insert into a partitioned table before a key that keeps being taken is an error. */
const KEYED_INSERT_ATTEMPTS = 10;
/** Tries of an insert read back on a Galera node (insertReadBack) before missing rows are an error. */
const MAX_INSERT_ATTEMPTS = 5;

/** The queue's table: its name, and quoted for its own connection and (with the database) for a caller's. */
export interface InsertTarget {
  name: string;
  quoted: QuotedIdentifier;
  qualified: QuotedIdentifier;
}

/** The insert target of table `name` in `database`. */
export function insertTarget(database: string, name: string): InsertTarget {
  const quoted = quoteIdentifier(name);
  return { name, quoted, qualified: `${quoteIdentifier(database)}.${quoted}` as QuotedIdentifier };
}

/**
 * How jobs get into the table, by the table's layout and the connection: into an unpartitioned
 * table, whose unique job_key index drops keys sent twice; into a partitioned one, with the keys
 * held by jobq_job_keys; on a Galera node, read back; on the caller's connection, inside the
 * caller's transaction.
 */
export class JobInserts {
  /** Kinds this process has listed in jobq_counters and in jobq_grouped_kinds already. */
  private readonly listedKinds = new Set<string>();
  private readonly groupedKinds = new Set<string>();
  /** This writer of uncounted jobs, and when to renew its lease (sql/uncounted-jobs.ts), by performance.now(). */
  private readonly writer = randomBytes(16);
  private leaseRenewAt = 0;

  constructor(
    private readonly db: Database,
    private readonly table: InsertTarget,
    /** Runs a statement, turning a missing or misshapen table into an actionable error. */
    private readonly described: <T>(work: () => Promise<T>) => Promise<T>,
    private readonly partitioned: () => Promise<boolean>,
  ) {}

  /**
   * One job in one round trip (on the caller's connection, two: the insert and its count; and the
   * first time a job of its kind has a group, one before); its id, or that of the job holding its
   * key or unique key. `keysGiven`: the caller chose its key or a unique key (which a job may hold
   * already), jobq did not.
   */
  async one(row: JobRow, options: EnqueueOptions, keysGiven: boolean): Promise<number> {
    const caller = callerOf(options);
    await this.listKinds([row]);
    return this.traced([row], (id) => id, async () => {
      if (await this.partitionedFor([row])) return (await this.insertKeyed([row], caller, true))!.firstId!;
      if (windowOf(row) !== undefined) return this.insertWindowed(row, caller);
      if (this.readsBackInserts(caller)) return (await this.insertReadBack([row], keysGiven)).firstId!;
      const insert = (marker: Buffer | undefined): Statement => [insertOneJobSql(this.tableFor(caller), insertShape([row], marker)), insertValues([row], marker)];
      const [inserted] = (await this.insertCounted(caller, [row], keysGiven, insert)) as [{ insertId: number }];
      return Number(inserted.insertId);
    });
  }

  /** Jobs in multi-row INSERTs of up to 1,000 rows, each chunk all or nothing; how many, and their ids. */
  async many(rows: JobRow[], options: EnqueueOptions & { idRange?: boolean }, keysGiven: boolean): Promise<EnqueueResult> {
    const caller = callerOf(options);
    if (rows.length === 0) return { count: 0, firstId: null, lastId: null };
    await this.listKinds(rows);
    return this.traced(rows, (result) => result.firstId, () => this.insertMany(rows, caller, options.idRange !== false, keysGiven));
  }

  /**
   * Lists the kinds of the rows, on the queue's own connection and before the rows go in: in
   * jobq_counters, whose kinds stats() counts the jobs of (claim/sql/counters.ts), and, those that
   * carry a group, in jobq_grouped_kinds (claim/sql/groups.ts), so that workers share them between
   * groups from the moment the jobs are there. Once per kind and process.
   */
  private async listKinds(rows: readonly JobRow[]): Promise<void> {
    const unlisted = (listed: Set<string>, of: readonly JobRow[]) => [...new Set(of.filter((row) => row[1] !== null && !listed.has(row[1])).map((row) => row[1]!))];
    const kinds = unlisted(this.listedKinds, rows);
    const grouped = unlisted(this.groupedKinds, rows.filter((row) => row[8] !== null));
    const statements = [
      ...(kinds.length === 0 ? [] : [[listKindsSql(kinds.length), kinds.flatMap((kind) => [this.table.name, kind])] as const]),
      ...(grouped.length === 0 ? [] : [[addGroupedKindsSql(grouped.length), grouped.flatMap((kind) => [this.table.name, kind])] as const]),
    ];
    if (statements.length === 0) return;
    await this.run(statements.map(([sql]) => sql).join(';\n'), statements.flatMap(([, values]) => values));
    for (const kind of kinds) this.listedKinds.add(kind);
    for (const kind of grouped) this.groupedKinds.add(kind);
  }

  /**
   * Runs an insert of these rows in a producer span when the application traces
   * (src/tracing/job-spans.ts), the rows carrying the span's context.
   */
  private async traced<T>(rows: JobRow[], idOf: (result: T) => number | null, insert: () => Promise<T>): Promise<T> {
    const spans = await loadJobSpans();
    if (spans === undefined || !spans.enabled) return insert();
    const sent = { kinds: rows.map((row) => row[1]), server: this.db.server };
    return spans.send(sent, (traceContext) => {
      for (const row of rows) row[7] = traceContext;
      return insert();
    }, idOf);
  }

  private async insertMany(rows: JobRow[], caller: CallerTransaction | undefined, idRange: boolean, keysGiven: boolean): Promise<EnqueueResult> {
    const partitioned = await this.partitionedFor(rows);
    let firstId: number | null = null;
    let lastId: number | null = null;
    const add = (range: IdRange | undefined) => {
      if (range === undefined || range.firstId === null || range.lastId === null) return;
      firstId = firstId === null ? range.firstId : Math.min(firstId, range.firstId);
      lastId = lastId === null ? range.lastId : Math.max(lastId, range.lastId);
    };
    // Jobs whose unique key holds for a time go in one at a time, each with its window.
    for (const row of rows) {
      if (windowOf(row) === undefined) continue;
      const id = await this.insertWindowed(row, caller);
      add({ firstId: id, lastId: id });
    }
    const others = rows.filter((row) => windowOf(row) === undefined);
    for (const chunk of chunks(others)) add(partitioned ? await this.insertKeyed(chunk, caller, idRange) : await this.insertUnique(chunk, caller, idRange, keysGiven));
    return { count: rows.length, firstId, lastId };
  }

  /**
   * A job whose unique key holds for a time (sql/unique-jobs.ts, jobq_unique_windows): the key's
   * window opened, or found open, under its row's lock; if it was open, the id of the job it holds
   * for, and nothing inserted; else the job inserted and counted, and named in the window, in the
   * same transaction (the caller's, if given). Its id.
   */
  private async insertWindowed(row: JobRow, caller: CallerTransaction | undefined): Promise<number> {
    const key = [this.table.name, row[9]] as const;
    const newJobs = caller === undefined ? NEW_JOBS_TABLE : `${quoteIdentifier(this.db.settings.database)}.${NEW_JOBS_TABLE}`;
    const target = { queue: this.table.name, jobs: this.tableFor(caller), newJobs };
    const steps = async (send: (statements: Statement[]) => Promise<unknown[]>): Promise<number> => {
      const [, [window]] = (await send([[uniqueSql.OPEN_WINDOW_SQL, [...key, windowOf(row)]], [uniqueSql.WINDOW_JOB_SQL, key]])) as [unknown, Array<{ job_id: number }>];
      if (Number(window!.job_id) !== 0) return Number(window!.job_id);
      const marker = newMarker();
      // The window is named right after the insert, while LAST_INSERT_ID() is the job's.
      const [inserted] = (await send([[insertOneJobSql(target.jobs), insertValues([row], marker)], [uniqueSql.NAME_WINDOW_JOB_SQL, key], countNewJobs(target, [row], true, marker)])) as [{ insertId: number }];
      return Number(inserted.insertId);
    };
    if (caller !== undefined) return this.described(() => this.inCallerTransaction(caller, steps));
    return this.described(() => this.db.transaction((tx) => steps((statements) => tx.run(...statements))));
  }

  /** Inserts jobs into an unpartitioned table, whose unique job_key index drops keys sent twice; then reads their ids unless `idRange` is false. */
  private async insertUnique(rows: JobRow[], caller: CallerTransaction | undefined, withIdRange: boolean, keysGiven: boolean): Promise<IdRange | undefined> {
    if (this.readsBackInserts(caller)) return this.insertReadBack(rows, keysGiven);
    const table = this.tableFor(caller);
    const range: Statement[] = withIdRange ? [idRangeOfKeys(table, rows).statement] : [];
    const results = await this.insertCounted(caller, rows, keysGiven, (marker) => [insertJobsSql(table, rows.length, insertShape(rows, marker)), insertValues(rows, marker)], range);
    return withIdRange ? idRange((results.at(-1) as Array<{ first_id: number | null; last_id: number | null }>)[0]) : undefined;
  }

  /**
   * The insert, the count of the jobs it made (new-job-count.ts) and the statements `after`, in one
   * transaction: on the queue's connection, in one round trip; on the caller's, in the caller's
   * transaction. Sent again after a deadlock or a lost connection, the insert has a new marker and
   * its jobs are counted by it: an earlier attempt may have made them. A few jobs on the queue's
   * connection go in uncounted instead, each statement on its own, in one round trip.
   */
  private async insertCounted(caller: CallerTransaction | undefined, rows: JobRow[], keysGiven: boolean, insert: (marker: Buffer | undefined) => Statement, after: Statement[] = []): Promise<unknown[]> {
    if (caller === undefined && rows.length <= UNCOUNTED_UP_TO) {
      // A few jobs go in uncounted (marker undefined), in autocommit, under this writer's lease
      // (queue/sql/uncounted-jobs.ts): a transaction with their count cost a one-job insert a
      // fifth of its speed.
      const [sql, values] = insert(undefined);
      const renewing = performance.now() >= this.leaseRenewAt;
      const renewal: Statement[] = renewing ? [[RENEW_WRITER_LEASE_SQL, [this.table.name, this.writer]]] : [];
      const sent = performance.now();
      if (renewal.length === 0 && after.length === 0) return [await this.described(() => this.db.queryOutsideTransactions(sql, values as unknown[]))];
      const statements = [...renewal, [sql, values] as const, ...after];
      const results = await this.described(() => this.db.queryOutsideTransactions<unknown[]>(statements.map(([text]) => text).join(';\n'), statements.flatMap(([, each]) => each ?? [])));
      if (renewing) this.leaseRenewAt = sent + WRITER_LEASE_MS - WRITER_LEASE_MARGIN_MS;
      return results.slice(renewal.length);
    }
    const target = { queue: this.table.name, jobs: this.tableFor(caller), newJobs: caller === undefined ? NEW_JOBS_TABLE : `${quoteIdentifier(this.db.settings.database)}.${NEW_JOBS_TABLE}` };
    if (caller !== undefined) {
      return this.described(async () => {
        const marker = newMarker();
        const send = ([sql, values]: Statement) => caller.query(sql, values ?? []);
        const inserted = await send(insert(marker));
        // A mysql2 connection outside a transaction commits each statement alone: the count comes
        // right after the insert (a connection lost between the two leaves it short until a recount).
        const results = [inserted];
        for (const statement of [countNewJobs(target, rows, !keysGiven, marker), ...after]) results.push(await send(statement));
        return results;
      });
    }
    let attempt = 0;
    return this.described(() =>
      this.db.transaction((tx) => {
        const marker = newMarker();
        return tx.commitWith(insert(marker), countNewJobs(target, rows, !keysGiven && ++attempt === 1, marker), ...after);
      }),
    );
  }

  /**
   * Whether the table is partitioned (and the rows go in by insertKeyed); unique jobs are refused
   * there, its job_key index not being unique (sql/partitions.ts).
   */
  private async partitionedFor(rows: readonly JobRow[]): Promise<boolean> {
    const partitioned = await this.partitioned();
    if (partitioned && rows.some((row) => row[9] !== null)) {
      throw new JobqError(`unique jobs need a table that is not partitioned, and table ${JSON.stringify(this.table.name)} is; leave out unique, or run "jobq setup-tables --partitions 0"`, ExitCode.usage);
    }
    return partitioned;
  }

  /** On a Galera node, jobq's own inserts are read back (see insertReadBack); a caller's transaction is the caller's to commit. */
  private readsBackInserts(caller: CallerTransaction | undefined): boolean {
    return caller === undefined && this.db.galera !== undefined;
  }

  /**
   * On a Galera node: the INSERT and the count of its jobs, committed, and a read of its keys in one
   * round trip, sent again until every key is there. A surviving node of a cluster that lost one was seen to answer OK to a COMMIT
   * whose changes never appeared (src/claim/commit.ts, commitTurn); the keys make sending the rows
   * again safe, and each such retry counts as a retried transaction. The read runs microseconds
   * after the COMMIT, in the same packet: no worker can have claimed and deleted the jobs yet.
   */
  private async insertReadBack(rows: JobRow[], keysGiven: boolean): Promise<IdRange> {
    const { statement: readKeys, distinct } = idRangeOfKeys(this.table.quoted, rows);
    const target = { queue: this.table.name, jobs: this.table.quoted, newJobs: NEW_JOBS_TABLE };
    let sends = 0;
    for (let attempt = 1; ; attempt++) {
      const range = await this.described(() =>
        this.db.transaction(async (tx) => {
          const marker = newMarker();
          const { read } = await tx.commitThenRead(
            [[insertJobsSql(this.table.quoted, rows.length, insertShape(rows, marker)), insertValues(rows, marker)], countNewJobs(target, rows, !keysGiven && ++sends === 1, marker)],
            readKeys,
          );
          return (read as Array<{ first_id: number | null; last_id: number | null; found: number }>)[0];
        }),
      );
      if (Number(range?.found) === distinct) return idRange(range);
      if (attempt === MAX_INSERT_ATTEMPTS) throw new Error(`${distinct - Number(range?.found)} of ${distinct} jobs were not in the table after ${attempt} inserts that each answered OK`);
      this.db.counters.deadlockRetries++;
    }
  }

  /**
   * Inserts jobs into a partitioned table, their keys' uniqueness held by jobq_job_keys
   * (sql/job-keys.ts). On the queue's connection: one transaction in one round trip, unless a key
   * is taken; then the careful way, in two. On the caller's: the same steps one statement at a
   * time inside the caller's transaction (which must be open: a savepoint undoes the first try,
   * and each careful step relies on the locks of the one before). A key given twice in the rows
   * queues its first job, as the unique index of an unpartitioned table would.
   */
  private async insertKeyed(rows: JobRow[], caller: CallerTransaction | undefined, withIdRange: boolean): Promise<IdRange | undefined> {
    const inDatabase = (name: string) => (caller === undefined ? name : `${quoteIdentifier(this.db.settings.database)}.${name}`);
    const chunk = new KeyedInsert(this.tableFor(caller), inDatabase(keySql.KEYS_TABLE), inDatabase(NEW_JOBS_TABLE), this.table.name, rows);
    if (caller !== undefined) return this.described(() => this.inCallerTransaction(caller, (send) => this.insertKeyedSteps(chunk, send)));
    // A key taken between the careful way's two round trips (by a writer of a new key) fails it
    // as the first try failed; each such retry follows a key another writer committed.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.described(() =>
          this.db.transaction(async (tx) => {
            if (attempt > 1) return KeyedInsert.rangeOf(await tx.commitWith(...chunk.insert(chunk.free(await tx.run(...chunk.lockTaken()))), chunk.range()));
            const insert = chunk.insert(chunk.jobs);
            if (chunk.jobs.length === 1) {
              const [inserted] = (await tx.commitWith(...insert)) as [{ insertId: number }];
              return { firstId: Number(inserted.insertId), lastId: Number(inserted.insertId) };
            }
            if (!withIdRange) {
              await tx.commitWith(...insert);
              return undefined;
            }
            return KeyedInsert.rangeOf(await tx.commitWith(...insert, chunk.range()));
          }),
        );
      } catch (error) {
        if (!isDuplicateKey(error) || attempt === KEYED_INSERT_ATTEMPTS) throw error;
      }
    }
  }

  /** insertKeyed's steps on a caller's connection, after its savepoint: the first try, undone to the savepoint when a key is taken, then the careful way. */
  private async insertKeyedSteps(chunk: KeyedInsert, send: (statements: Statement[]) => Promise<unknown[]>): Promise<IdRange> {
    try {
      return KeyedInsert.rangeOf(await send([...chunk.insert(chunk.jobs), chunk.range()]));
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      await send([[keySql.ROLLBACK_TO_SAVEPOINT_SQL]]);
    }
    const free = chunk.free(await send(chunk.lockTaken()));
    return KeyedInsert.rangeOf(await send([...chunk.insert(free), chunk.range()]));
  }

  /**
   * Steps that rely on a transaction, one statement at a time on the caller's connection, after a
   * savepoint. Without a transaction open (the connection is in autocommit), the savepoint would
   * vanish at once and the steps' locks with it: then they run in a transaction of their own,
   * committed at once, as a single INSERT would be.
   */
  private async inCallerTransaction<T>(caller: CallerTransaction, steps: (send: (statements: Statement[]) => Promise<unknown[]>) => Promise<T>): Promise<T> {
    const send = async (statements: Statement[]) => {
      const each: unknown[] = [];
      for (const [sql, values] of statements) each.push(await caller.query(sql, values ?? []));
      return each;
    };
    const [savepoint] = await send([[keySql.SAVEPOINT_SQL]]);
    const ownTransaction = !caller.isOpen(savepoint);
    if (ownTransaction) await send([['START TRANSACTION'], [keySql.SAVEPOINT_SQL]]);
    try {
      const result = await steps(send);
      if (ownTransaction) await send([['COMMIT']]);
      return result;
    } catch (error) {
      if (ownTransaction) await send([['ROLLBACK']]).catch(() => undefined);
      throw error;
    }
  }

  private tableFor(caller: CallerTransaction | undefined): QuotedIdentifier {
    return caller === undefined ? this.table.quoted : this.table.qualified;
  }

  /** One statement on the queue's own connection. */
  private run<T>(sql: string, values?: unknown[]): Promise<T> {
    return this.described(() => this.db.query<T>(sql, values));
  }
}

/** How an insert of these rows is written: uncounted (no marker), and whether a row debounces. */
function insertShape(rows: readonly JobRow[], marker: Buffer | undefined): { uncounted: boolean; debounce: boolean } {
  return { uncounted: marker === undefined, debounce: rows.some((row) => row[10] === 'debounce') };
}

/** The read of the ids the rows' keys ended up with (sql/enqueue.ts), and how many distinct keys it finds when every row is in. */
function idRangeOfKeys(table: QuotedIdentifier, rows: readonly JobRow[]): { statement: Statement; distinct: number } {
  const keys = [...new Set(rows.map(indexKeyOf))];
  return { statement: [ID_RANGE_OF_KEYS_SQL(table), [keys]], distinct: keys.length };
}

/** Rows in INSERT-sized chunks: at most CHUNK_ROWS rows and about CHUNK_BYTES of values. */
function* chunks(rows: JobRow[]): Generator<JobRow[]> {
  let chunk: JobRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = 200 + (row[2]?.length ?? 0) + row[3].length + row[4].length;
    if (chunk.length > 0 && (chunk.length >= CHUNK_ROWS || bytes + size > CHUNK_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(row);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}
