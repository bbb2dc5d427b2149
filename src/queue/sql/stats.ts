/** Counts per kind and status; a covering scan of (kind, status, run_after). */
export const COUNT_BY_KIND_AND_STATUS_SQL = (table: string) => `
  SELECT kind, status, COUNT(*) AS count FROM ${table} FORCE INDEX (kind_status_run_after)
   GROUP BY kind, status ORDER BY kind, status`;

/**
 * Age in microseconds of the job at the head of the queue (the first one due, by the claim
 * order), and the highest id (for throughput between two readings): two index dives.
 */
export const HEAD_AGE_AND_MAX_ID_SQL = (table: string) => `
  SELECT (SELECT TIMESTAMPDIFF(MICROSECOND, created_at, NOW(6)) FROM ${table} FORCE INDEX (status_run_after)
           WHERE status = 'unclaimed' ORDER BY run_after, id LIMIT 1) AS age_us,
         (SELECT MAX(id) FROM ${table}) AS max_id`;

/** Claimed jobs per owner, with how many of them have an expired lease. */
export const CLAIMED_BY_OWNER_SQL = (table: string) => `
  SELECT owner_id, COUNT(*) AS count, SUM(run_after <= NOW(6)) AS expired
    FROM ${table} FORCE INDEX (status_run_after)
   WHERE status = 'claimed'
   GROUP BY owner_id ORDER BY owner_id`;

/** The server as `stats` describes it. The isolation variable's name differs by server and version. */
export const SERVER_INFO_SQL = (isolationVariable: 'transaction_isolation' | 'tx_isolation') => `
  SELECT @@version AS version, @@global.${isolationVariable} AS isolation,
         @@global.binlog_format AS binlog_format, @@global.log_bin AS log_bin`;
