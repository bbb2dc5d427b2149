import type { QuotedIdentifier } from '../../config/identifiers.js';
import { UNCOUNTED_TOKEN } from '../../claim/sql/counters.js';
/**
 * Cancelling jobs by id. The rows are locked first (FOR UPDATE, waiting for a claim that is
 * taking them right now), so that what is reported about each job is what the UPDATE then finds:
 * a job a worker holds is never ended under it, only marked for its worker to cancel
 * (worker/cancel-watch.ts).
 */

/**
 * The named jobs as they are now, locked until COMMIT; `uncounted`: waiting, not counted yet;
 * `lease_left_us`, of a claimed job: negative once its lease ran out. Params: [ids].
 */
export const LOCK_JOBS_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind, status, owner_id, TIMESTAMPDIFF(MICROSECOND, NOW(6), run_after) AS lease_left_us,
         claim_token = ${UNCOUNTED_TOKEN} AS uncounted
    FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id IN (?)
     FOR UPDATE`;

/**
 * Ends locked jobs that nobody runs as `cancelled`: waiting, delayed, failed, and claimed ones
 * whose lease ran out (a late settle of their old claim finds its token gone). run_after is when
 * it ended, as for done and failed jobs (pruning reads it). A cancelled job gives its keys up, as
 * the deletion that cancelling once was did: the same key may be queued again. Params: [ids].
 */
export const CANCEL_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'cancelled', claim_token = DEFAULT, owner_id = DEFAULT, owner_date = NOW(6), run_after = NOW(6),
         cancel_requested_at = IFNULL(cancel_requested_at, NOW(6)), given_key = NULL, unique_key = NULL, unique_while = NULL
   WHERE id IN (?)`;

/** Marks locked jobs that a worker runs: it sees the mark and cancels them. Params: [ids]. */
export const REQUEST_CANCEL_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET cancel_requested_at = IFNULL(cancel_requested_at, NOW(6))
   WHERE id IN (?)`;

/** Which of these jobs (a worker's running ones) are marked for cancelling. Params: [ids]. */
export const CANCEL_REQUESTED_SQL = (table: QuotedIdentifier) => `
  SELECT id FROM ${table} FORCE INDEX (PRIMARY) WHERE id IN (?) AND cancel_requested_at IS NOT NULL`;
