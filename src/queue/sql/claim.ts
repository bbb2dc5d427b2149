/**
 * Claiming: the article's two steps. First find candidate ids with a plain read that locks
 * nothing; then, in a short READ COMMITTED transaction, lock those of them that are still free
 * with `FOR UPDATE SKIP LOCKED` by primary key, and mark them claimed by a fresh token.
 *
 * Every statement that locks or writes names its rows by primary key with FORCE INDEX (PRIMARY):
 * on a young table with stale statistics the optimizer has been seen to plan `WHERE id IN (...)`
 * as a full scan, which at REPEATABLE READ locked hundreds of rows and deadlocked with inserts.
 */

/** A job may be handed out when it is waiting and due, or claimed with its lease run out. */
const CLAIMABLE = `status IN ('unclaimed', 'claimed') AND run_after <= NOW(6)`;

/**
 * Candidate ids, oldest first. Both halves are ranges on (status, run_after) read in index order,
 * so each stops after LIMIT entries however long the queue is. Expired leases go first: they are
 * the oldest work there is. Params: limit, limit, limit.
 */
export const CANDIDATES_OLDEST_SQL = (table: string) => `
  (SELECT id FROM ${table} FORCE INDEX (status_run_after)
    WHERE status = 'claimed' AND run_after <= NOW(6)
    ORDER BY run_after, id LIMIT ?)
  UNION ALL
  (SELECT id FROM ${table} FORCE INDEX (status_run_after)
    WHERE status = 'unclaimed' AND run_after <= NOW(6)
    ORDER BY run_after, id LIMIT ?)
  LIMIT ?`;

/**
 * The article's pick: waiting jobs whose `d` starts with a given letter, a range on (status, d).
 * Params: 'x%', limit.
 */
export const CANDIDATES_PREFIX_SQL = (table: string) => `
  SELECT id FROM ${table} FORCE INDEX (status_d)
   WHERE status = 'unclaimed' AND d LIKE ? AND run_after <= NOW(6)
   LIMIT ?`;

/**
 * Locks those candidates nobody else holds and that are still claimable (re-checked on the
 * latest committed row, under the lock). SKIP LOCKED never waits: rows another consumer is
 * claiming right now are simply left out. Params: [ids].
 */
export const LOCK_CANDIDATES_SQL = (table: string) => `
  SELECT id, d, e, attempts FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id IN (?) AND ${CLAIMABLE}
   FOR UPDATE SKIP LOCKED`;

/**
 * Marks locked rows as ours until the lease ends; every claim counts an attempt.
 * Params: owner id, claim token, lease in microseconds, [ids].
 */
export const MARK_CLAIMED_SQL = (table: string) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'claimed', owner_id = ?, owner_date = NOW(6), claim_token = ?,
         run_after = NOW(6) + INTERVAL ? MICROSECOND, attempts = attempts + 1
   WHERE id IN (?)`;

/**
 * Locked rows that have used up their attempts (their last lease ran out) stop here.
 * Params: [ids].
 */
export const MARK_FAILED_SQL = (table: string) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'failed', claim_token = NULL
   WHERE id IN (?)`;
