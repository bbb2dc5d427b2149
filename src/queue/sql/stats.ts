/** Counts per status; a covering range over (status, run_after). */
export const COUNT_BY_STATUS_SQL = (table: string) => `
  SELECT status, COUNT(*) AS count FROM ${table} GROUP BY status`;

/**
 * Age in microseconds of the job at the head of the queue (the first one due, by the claim
 * order): one index dive, however long the queue.
 */
export const HEAD_AGE_SQL = (table: string) => `
  SELECT TIMESTAMPDIFF(MICROSECOND, created_at, NOW(6)) AS age_us FROM ${table} FORCE INDEX (status_run_after)
   WHERE status = 'unclaimed'
   ORDER BY run_after, id LIMIT 1`;

/** Claimed jobs per owner, with how many of them have an expired lease. */
export const CLAIMED_BY_OWNER_SQL = (table: string) => `
  SELECT owner_id, COUNT(*) AS count, SUM(run_after <= NOW(6)) AS expired
    FROM ${table} FORCE INDEX (status_run_after)
   WHERE status = 'claimed'
   GROUP BY owner_id ORDER BY owner_id`;
