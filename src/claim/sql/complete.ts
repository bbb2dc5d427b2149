import type { QuotedIdentifier } from '../../config/identifiers.js';
import { WAITING_STATUS } from './scheduled.js';
/**
 * Ending a claim. Each statement names its rows by primary key and by the claim's token: a
 * consumer whose lease ran out and whose jobs another consumer has claimed since owns nothing any
 * more, and its statements change nothing (the affected-row count tells it so).
 * They ride in the first round trip of the next claim turn, and are safe to send again after a
 * lost connection because the token makes them idempotent.
 */

/**
 * How many of a claim's rows another claim holds now (settled rows, and waiting ones, whose
 * token is an insert's mark, do not count): the honest "lost" count after a reconnect. Params:
 * [ids], token.
 */
export const HELD_BY_OTHERS_SQL = (table: QuotedIdentifier) => `
  SELECT COUNT(*) AS others FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id IN (?) AND status = 'claimed' AND claim_token <> ?`;

/** Deletes processed jobs (the article's default). Params: [ids], token. */
export const DELETE_OWNED_SQL = (table: QuotedIdentifier) => `
  DELETE j FROM ${table} AS j FORCE INDEX (PRIMARY)
   WHERE j.id IN (?) AND j.claim_token = ?`;

/**
 * Keeps processed jobs as `done` (the article's debugging mode, `keepDone`). A finished job's
 * run_after is when it ended: retention (prune.ts) reads them by that. Params: [ids], token.
 */
export const MARK_DONE_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'done', claim_token = DEFAULT, run_after = NOW(6)
   WHERE id IN (?) AND claim_token = ?`;

/**
 * Keeps processed jobs as `done` with what their handlers returned (`keepResults`): one CASE arm
 * per job, so that a batch stays one statement per kind. Params: per job its id and its result's
 * JSON text, then [ids], token.
 */
export const MARK_DONE_WITH_RESULTS_SQL = (table: QuotedIdentifier, jobs: number) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'done', claim_token = DEFAULT, run_after = NOW(6),
         result = CASE id ${Array.from({ length: jobs }, () => 'WHEN ? THEN ?').join(' ')} END
   WHERE id IN (?) AND claim_token = ?`;

/**
 * Ends jobs their handler gave up on at a cancel (queue/sql/cancel.ts marked them): `cancelled`,
 * ended now, their keys given up as a cancel of a waiting job gives them up. Params: [ids], token.
 */
export const CANCEL_OWNED_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'cancelled', claim_token = DEFAULT, run_after = NOW(6),
         given_key = NULL, unique_key = NULL, unique_while = NULL
   WHERE id IN (?) AND claim_token = ?`;

/**
 * Hands jobs back unstarted, waiting again from now, and gives back the attempt their claim
 * counted: a worker that stops, or makes room for a job it must run alone, costs them nothing.
 * Their lease expiries stay: a job not yet proven innocent of a crash is still run alone.
 * Params: [ids], token.
 */
export const RELEASE_OWNED_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'unclaimed', attempts = attempts - (attempts > 0), claim_token = DEFAULT, owner_id = DEFAULT,
         owner_date = NOW(6), run_after = NOW(6)
   WHERE id IN (?) AND claim_token = ?`;

/**
 * Puts jobs off at their handler's asking (job.snooze): waiting again, due after the delay, with
 * the attempt their claim counted given back and a snooze counted instead. The run ended in the
 * handler: lease expiries start again from 0. Params: delay µs, [ids], token.
 */
export const SNOOZE_OWNED_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET attempts = attempts - (attempts > 0), snoozes = snoozes + 1, lease_expiries = 0,
         claim_token = DEFAULT, owner_id = DEFAULT, owner_date = NOW(6), run_after = NOW(6) + INTERVAL ? MICROSECOND,
         status = ${WAITING_STATUS}
   WHERE id IN (?) AND claim_token = ?`;

/** Stores what a running job's handler last reported (`job.progress`), while its claim holds it. Params: JSON text, id, token. */
export const SET_PROGRESS_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY) SET progress = ? WHERE id = ? AND claim_token = ?`;

/** Extends the lease of jobs still held, while a slow batch is processed. Params: lease µs, [ids], token. */
export const EXTEND_LEASE_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET run_after = NOW(6) + INTERVAL ? MICROSECOND
   WHERE id IN (?) AND claim_token = ?`;

/** Puts failed jobs back in the queue with fresh attempts. Params: [ids]. */
export const REQUEUE_FAILED_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET status = 'unclaimed', attempts = 0, lease_expiries = 0, claim_token = DEFAULT, owner_id = DEFAULT,
         owner_date = NOW(6), run_after = NOW(6)
   WHERE id IN (?) AND status = 'failed'`;

/** How many errors a job keeps in `errors`: those of its latest attempts. */
export const KEPT_ERRORS = 20;

/** The longest a failed job waits for its next attempt. */
export const MAX_RETRY_DELAY_MS = 3_600_000;

/**
 * A handler failed on these jobs: each goes back to the queue after a delay that doubles with
 * every attempt (base × 2^(attempts-1), at most an hour), or to `failed` once its attempts are
 * used up (run_after then says when it ended); the error is kept either way, in `last_error` and
 * appended to `errors` with its attempt, time and stack, the oldest dropped past KEPT_ERRORS.
 * The run ended in the handler, not in a crash: the job's lease expiries start again from 0. SET
 * runs left to right: `attempts` is unchanged here, and `status` reads the new `run_after`
 * (a retry without a delay waits at once; sql/scheduled.ts). Params: max attempts, base delay µs,
 * max attempts, error text, error text, stack text, [ids], token.
 */
export const FAIL_OWNED_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY)
     SET lease_expiries = 0,
         run_after = IF(attempts >= ?, NOW(6),
                        NOW(6) + INTERVAL CAST(LEAST(? * POW(2, attempts - 1), ${MAX_RETRY_DELAY_MS * 1000}) AS UNSIGNED) MICROSECOND),
         status = IF(attempts >= ?, 'failed', ${WAITING_STATUS}),
         last_error = ?, claim_token = DEFAULT,
         errors = JSON_ARRAY_APPEND(IF(JSON_LENGTH(errors) >= ${KEPT_ERRORS}, JSON_REMOVE(errors, '$[0]'), IFNULL(errors, JSON_ARRAY())), '$',
                    JSON_OBJECT('attempt', attempts, 'at', DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%dT%H:%i:%s.%fZ'), 'message', ?, 'stack', ?))
   WHERE id IN (?) AND claim_token = ?`;
