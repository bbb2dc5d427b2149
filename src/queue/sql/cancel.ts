import type { QuotedIdentifier } from '../../config/identifiers.js';
import { UNCOUNTED_TOKEN } from '../../claim/sql/counters.js';
/**
 * Cancelling jobs by id. The rows are locked first (FOR UPDATE, waiting for a claim that is
 * taking them right now), so that what is reported about each job is what the DELETE then finds:
 * a job a worker holds is never removed from under it.
 */

/** The named jobs as they are now, locked until COMMIT; `uncounted`: waiting, not counted yet. Params: [ids]. */
export const LOCK_JOBS_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind, status, owner_id, TIMESTAMPDIFF(MICROSECOND, NOW(6), run_after) AS lease_left_us,
         claim_token = ${UNCOUNTED_TOKEN} AS uncounted
    FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id IN (?)
     FOR UPDATE`;

/** Removes those of the locked jobs that nobody works on. Params: [ids]. */
export const DELETE_CANCELLABLE_SQL = (table: QuotedIdentifier) => `
  DELETE j FROM ${table} AS j FORCE INDEX (PRIMARY)
   WHERE j.id IN (?) AND j.status IN ('unclaimed', 'failed')`;
