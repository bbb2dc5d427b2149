import type { QuotedIdentifier } from '../../config/identifiers.js';
/**
 * Partitioning the jobs table on its primary key (`setup-tables --partitions N`). HASH(id) puts
 * job `id` in partition `id MOD N`; KEY(id) in one picked by the server's hash of the id. Either
 * way a statement that names its rows by id (locking, claiming, settling) touches only their
 * partitions, and a claim whose lane is a set of partitions reads only those (sql/claim.ts).
 * The partitions are named p0 .. pN-1 by the server, on MySQL and MariaDB alike.
 */

export type PartitionMethod = 'hash' | 'key';

/** How a table is partitioned: no rows when it is not. Params: database, table. */
export const PARTITIONS_SQL = `
  SELECT PARTITION_METHOD AS method, COUNT(*) AS count
    FROM information_schema.PARTITIONS
   WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND PARTITION_NAME IS NOT NULL
   GROUP BY PARTITION_METHOD`;

/**
 * Partitions the table (or partitions it anew). `job_key` stops being a unique index, which a
 * partitioned table cannot have without `id` in it; jobq_job_keys holds its uniqueness instead
 * (sql/job-keys.ts). The ALTER copies the table: minutes for millions of rows.
 */
export const partitionTableSql = (table: QuotedIdentifier, method: PartitionMethod, count: number, keyIsUnique: boolean) => `
  ALTER TABLE ${table}
  ${keyIsUnique ? 'DROP INDEX job_key, ADD KEY job_key (job_key)' : ''}
  PARTITION BY ${method === 'hash' ? 'HASH' : 'KEY'} (id) PARTITIONS ${count}`;

/**
 * Back to one table, with the unique job_key index of an unpartitioned table. One statement: a
 * table left unpartitioned without its unique index would take a key twice.
 */
export const unpartitionTableSql = (table: QuotedIdentifier) => `
  ALTER TABLE ${table} DROP INDEX job_key, ADD UNIQUE KEY job_key (job_key) REMOVE PARTITIONING`;
