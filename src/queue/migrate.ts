import type { Database } from '../db/database.js';
import { ExitCode, JobqError } from '../errors.js';
import { ARTICLE_COLUMNS, CURRENT_SCHEMA_VERSION, MIGRATIONS, TABLE_INFO_SQL } from './sql/schema.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import { readTableLayout } from './table-layout.js';

/**
 * The table's schema version: null when there is no such table. A table without jobq's comment is
 * taken as version 1 if it has exactly the article's columns (so tables made by the article's
 * Python program are adopted); anything else is refused rather than altered.
 */
export async function readSchemaVersion(db: Database, database: string, table: string): Promise<number | null> {
  const rows = await db.query<Array<{ comment: string; columns: string }>>(TABLE_INFO_SQL, [database, table]);
  const info = rows[0];
  if (info === undefined) return null;
  const match = /^jobq schema (\d+)$/.exec(info.comment);
  if (match !== null) return Number(match[1]);
  if (info.columns === ARTICLE_COLUMNS.join(',')) return 1;
  throw new JobqError(
    `table ${JSON.stringify(table)} in database ${JSON.stringify(database)} was not made by jobq ` +
      `(columns: ${info.columns}); pick another --table or drop it`,
    ExitCode.schema,
  );
}

/** Runs one statement of a setup step, named for its progress: "schema 13", "partitioning". */
export type SetupStatement = (step: string, sql: string, values?: unknown[]) => Promise<unknown>;

/** Applies the migrations after `from`, in order; returns the version reached. */
export async function applyMigrations(db: Database, table: string, quotedTable: QuotedIdentifier, from: number, run: SetupStatement = (_, sql, values) => db.query(sql, values)): Promise<number> {
  const { partitions } = from === 0 ? { partitions: 0 } : await readTableLayout(db, db.settings.database, table);
  for (const migration of MIGRATIONS) {
    if (migration.version > from) await run(`schema ${migration.version}`, migration.sql(quotedTable, db.serverVersion, partitions > 0), migration.values?.(table));
  }
  return CURRENT_SCHEMA_VERSION;
}

/** Throws a one-line error unless the table exists at the version this jobq uses. */
export async function assertSchemaCurrent(db: Database, database: string, table: string): Promise<void> {
  const version = await readSchemaVersion(db, database, table);
  if (version === null) {
    throw new JobqError(
      `table ${JSON.stringify(table)} does not exist in database ${JSON.stringify(database)}; run "jobq setup-tables" first`,
      ExitCode.schema,
    );
  }
  if (version < CURRENT_SCHEMA_VERSION) {
    throw new JobqError(
      `table ${JSON.stringify(table)} has schema version ${version}, this jobq needs ${CURRENT_SCHEMA_VERSION}; run "jobq setup-tables" to migrate it (rows are kept)`,
      ExitCode.schema,
    );
  }
  if (version > CURRENT_SCHEMA_VERSION) {
    throw new JobqError(
      `table ${JSON.stringify(table)} has schema version ${version}, newer than this jobq knows (${CURRENT_SCHEMA_VERSION}); upgrade jobq`,
      ExitCode.schema,
    );
  }
}
