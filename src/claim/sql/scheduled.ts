import type { QuotedIdentifier } from '../../config/identifiers.js';

/**
 * Jobs not due yet (schema 22). A waiting job whose due time lies ahead is `scheduled`, not
 * `unclaimed`: in the status index, (status, waiting_priority, run_after), waiting jobs come by
 * priority before due time, so a claim that read `unclaimed` jobs due by now walked past every job
 * due later, of every priority, whenever it found fewer due jobs than it had room for (100,002
 * index entries and 22 ms for a claim of 2 due jobs among 100,000 delayed ones). A scheduled
 * job's waiting_priority is 0, so the due ones are one range, oldest first, that ends at the first
 * job not due: claim turns find them there and make them `unclaimed` (DUE_SCHEDULED_SQL,
 * PROMOTE_SQL); from then on they are claimed like any waiting job, by priority. Both are waiting
 * jobs in the kept counts (claim/sql/counters.ts).
 */

/**
 * The status of a waiting job, from its run_after: in an UPDATE's SET after run_after is set (SET
 * runs left to right on both servers), in an INSERT's values after run_after's.
 */
export const WAITING_STATUS = "IF(run_after > NOW(6), 'scheduled', 'unclaimed')";

/**
 * The scheduled jobs that have come due, oldest first, locked: SKIP LOCKED, so that two turns
 * never wait on each other for them (nor the one that found none on anybody); one index dive when
 * none is due. Params: limit.
 */
export const DUE_SCHEDULED_SQL = (table: QuotedIdentifier) => `
  SELECT id FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status = 'scheduled' AND waiting_priority = 0 AND run_after <= NOW(6)
   ORDER BY run_after, id LIMIT ?
     FOR UPDATE SKIP LOCKED`;

/** Makes locked due jobs waiting, with the turn's COMMIT. Params: [ids]. */
export const PROMOTE_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY) SET status = 'unclaimed' WHERE id IN (?) AND status = 'scheduled'`;

/**
 * In how many microseconds the next scheduled job comes due (NULL: none is scheduled): the first
 * entry of their range, one index dive.
 */
export const NEXT_DUE_SQL = (table: QuotedIdentifier) => `
  SELECT TIMESTAMPDIFF(MICROSECOND, NOW(6), MIN(run_after)) AS due_in_us FROM ${table} FORCE INDEX (status_priority_run_after)
   WHERE status = 'scheduled' AND waiting_priority = 0`;

/** Is a scheduled job due? For `hasPendingWork`. */
export const DUE_SCHEDULED_EXISTS = (table: QuotedIdentifier) =>
  `EXISTS (SELECT 1 FROM ${table} FORCE INDEX (status_priority_run_after) WHERE status = 'scheduled' AND waiting_priority = 0 AND run_after <= NOW(6))`;
