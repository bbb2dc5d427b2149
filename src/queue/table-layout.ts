import type { Database } from '../db/database.js';
import { ExitCode, JobqError } from '../errors.js';
import { PARTITIONS_SQL, type PartitionMethod } from './sql/partitions.js';

/** How the jobs table is laid out: partitioned on `id` (setup-tables --partitions) or not. */
export interface TableLayout {
  /** 0 when the table is not partitioned. */
  partitions: number;
  method?: PartitionMethod;
}

/** The most partitions `setup-tables --partitions` makes (the servers allow thousands). */
export const MAX_PARTITIONS = 256;

export async function readTableLayout(db: Database, database: string, table: string): Promise<TableLayout> {
  const [row] = await db.query<Array<{ method: string; count: number }>>(PARTITIONS_SQL, [database, table]);
  if (row === undefined) return { partitions: 0 };
  const method = row.method.toLowerCase();
  // setup-tables only makes HASH and KEY on id; a table partitioned by hand some other way is
  // left to the server (its candidate reads then filter ids instead of naming partitions).
  return method === 'hash' || method === 'key' ? { partitions: Number(row.count), method } : { partitions: 0 };
}

/** Checks a `partitions` setting: 0 (none) or 2 to MAX_PARTITIONS. */
export function checkPartitions(partitions: unknown, method: unknown): { partitions: number; method: PartitionMethod } {
  if (!(Number.isInteger(partitions) && ((partitions as number) === 0 || ((partitions as number) >= 2 && (partitions as number) <= MAX_PARTITIONS)))) {
    throw new JobqError(`partitions must be 0 (not partitioned) or a whole number from 2 to ${MAX_PARTITIONS}, not ${JSON.stringify(partitions)}`, ExitCode.usage);
  }
  if (method !== undefined && method !== 'hash' && method !== 'key') {
    throw new JobqError(`partition method must be "hash" or "key", not ${JSON.stringify(method)}`, ExitCode.usage);
  }
  return { partitions: partitions as number, method: (method as PartitionMethod | undefined) ?? 'hash' };
}

/** "partitioned by HASH (id) into 8 partitions", or "not partitioned". */
export function describeLayout(layout: TableLayout): string {
  return layout.partitions === 0 ? 'not partitioned' : `partitioned by ${layout.method!.toUpperCase()} (id) into ${layout.partitions} partitions`;
}
