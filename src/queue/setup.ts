import { MAX_LANES } from '../config/defaults.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import type { Database } from '../db/database.js';
import { ExitCode, JobqError } from '../errors.js';
import { DELETE_LANES_FROM_SQL, insertLanesSql } from '../claim/sql/lanes.js';
import { applyMigrations, readSchemaVersion, type SetupStatement } from './migrate.js';
import { StatementWatch } from '../db/statement-watch.js';
import * as keySql from './sql/job-keys.js';
import * as partitionSql from './sql/partitions.js';
import type { PartitionMethod } from './sql/partitions.js';
import { COUNT_ROWS_SQL, DROP_TABLE_SQL } from './sql/schema.js';
import { checkPartitions, readTableLayout, type TableLayout } from './table-layout.js';
import { recountKeptCounts } from './recount.js';

export interface SetupOptions {
  /** Drop and create the table (the article's setup). Refused on a non-empty table unless `force`. */
  recreate?: boolean;
  force?: boolean;
  /** Claim turns that may run at once, for all workers together (default 3; see DEFAULTS.lanes). */
  lanes?: number;
  /**
   * Partition the table on `id` into this many partitions (2 to 256), or 0 to undo it; left as it
   * is when omitted. Rows are kept; the table is copied. See "Scaling out" in docs/operations.md.
   */
  partitions?: number;
  /** How to partition: `hash` (default) or `key`. */
  partitionBy?: PartitionMethod;
  /**
   * Told every 250 ms while a statement changes a table that has rows (a migration, partitioning):
   * the step, and the fraction of it done as the server reports it (undefined where it does not:
   * MySQL without its performance_schema stage events).
   */
  onProgress?: (progress: SetupProgress) => void;
}

export interface SetupProgress {
  step: string;
  fraction: number | undefined;
}

export interface SetupResult {
  /** Schema version before: null when the table did not exist. */
  from: number | null;
  to: number;
  /** Rows dropped by `recreate`. */
  dropped: number;
  /** The table's partitioning now. */
  layout: TableLayout;
}

/**
 * Creates the table or migrates it keeping its rows (see JobQueue.setup); then sets its lanes and
 * its partitioning as asked, and, when it created or migrated the table, counts its kept counts.
 */
export async function setupTable(db: Database, table: { name: string; quoted: QuotedIdentifier }, options: SetupOptions): Promise<Omit<SetupResult, 'layout'>> {
  if (options.lanes !== undefined && !(Number.isInteger(options.lanes) && options.lanes >= 1 && options.lanes <= MAX_LANES)) {
    throw new JobqError(`lanes must be a whole number from 1 to ${MAX_LANES}, not ${JSON.stringify(options.lanes)}`, ExitCode.usage);
  }
  const partitioning = options.partitions === undefined ? undefined : checkPartitions(options.partitions, options.partitionBy);
  const database = db.settings.database;
  let from = await readSchemaVersion(db, database, table.name);
  let dropped = 0;
  const recreated = options.recreate === true && from !== null;
  if (recreated) {
    dropped = Number((await db.query<Array<{ count: number }>>(COUNT_ROWS_SQL(table.quoted)))[0]?.count ?? 0);
    if (dropped > 0 && !options.force) {
      throw new JobqError(
        `table ${JSON.stringify(table.name)} holds ${dropped} row${dropped === 1 ? '' : 's'} that --recreate would delete; add --force to drop ${dropped === 1 ? 'it' : 'them'} anyway`,
        ExitCode.refused,
      );
    }
    await db.query(DROP_TABLE_SQL(table.quoted));
    from = null;
  }
  // Statements on a table that has rows are watched, from a second connection opened when first needed.
  let watch: Promise<StatementWatch> | undefined;
  const { onProgress } = options;
  const run: SetupStatement =
    onProgress === undefined || from === null
      ? (_, sql, values) => db.query(sql, values)
      : async (step, sql, values) => {
          watch ??= StatementWatch.open(db);
          return (await watch).run(() => db.query(sql, values), (fraction) => onProgress({ step, fraction }));
        };
  try {
    const to = await applyMigrations(db, table.name, table.quoted, from ?? 0, run);
    // The keys of the jobs that went with a dropped table (jobq_job_keys exists from schema 10 on).
    if (recreated) await db.query(keySql.FORGET_KEYS_SQL, [table.name]);
    if (options.lanes !== undefined) {
      await db.query(DELETE_LANES_FROM_SQL, [table.name, options.lanes]);
      await db.query(insertLanesSql(options.lanes), Array(options.lanes).fill(table.name));
    }
    if (partitioning !== undefined) await partition(db, table, partitioning, run);
    // Kept counts a new or migrated table has none of yet. Not at every run: a recount makes every
    // enqueue and settle wait while it reads the table (a second or so per million jobs).
    if (from !== to) await recountKeptCounts(db, table);
    return { from, to, dropped };
  } finally {
    await (await watch?.catch(() => undefined))?.close();
  }
}

/** Partitions the table as asked, or undoes it; the job keys move with it (sql/job-keys.ts). */
async function partition(db: Database, table: { name: string; quoted: QuotedIdentifier }, wanted: { partitions: number; method: PartitionMethod }, run: SetupStatement): Promise<void> {
  const now = await readTableLayout(db, db.settings.database, table.name);
  if (wanted.partitions === now.partitions && (wanted.partitions === 0 || wanted.method === now.method)) return;
  if (wanted.partitions === 0) {
    await run('unpartitioning', partitionSql.unpartitionTableSql(table.quoted));
    await db.query(keySql.FORGET_KEYS_SQL, [table.name]);
  } else {
    // The keys first: if the ALTER fails, the table keeps its unique index and ignores them.
    if (now.partitions === 0) await run('recording the job keys', keySql.RECORD_EXISTING_KEYS_SQL(table.quoted), [table.name, table.name]);
    await run('partitioning', partitionSql.partitionTableSql(table.quoted, wanted.method, wanted.partitions, now.partitions === 0));
  }
}
