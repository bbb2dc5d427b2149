import type { QuotedIdentifier } from '../../config/identifiers.js';
import { UNCOUNTED_TOKEN } from '../../claim/sql/counters.js';
/**
 * Jobs put in without a count: one job, or a few, inserted on the queue's own connection in
 * autocommit (queue/enqueue.ts). Adding them to the waiting count in the insert's own transaction
 * cost a one-job enqueue a fifth of its speed (bench-results/README.md), so such a job is marked
 * instead, by its claim token, and counted later: by the fold of a worker's upkeep once it is a
 * second old, if no claim took it first (a claim counts out only the waiting jobs that were
 * counted), and by stats() until then. A fold reads the jobs by id from the queue's fold mark
 * on, in jobq_fold_marks; the second lets an insert's statement commit before a fold passes its
 * id (one that took longer stays uncounted, and uncounted when claimed, until a recount).
 */


export const CREATE_FOLD_MARKS_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_fold_marks (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    last_id BIGINT UNSIGNED NOT NULL
  ) ENGINE = InnoDB COMMENT = 'jobq: the highest job id whose uncounted job, if waiting, was counted'`;

/** The queue's mark, taken by one fold at a time (another skips its pass). Params: queue. */
export const LOCK_FOLD_MARK_SQL = 'SELECT last_id FROM jobq_fold_marks WHERE queue = ? FOR UPDATE SKIP LOCKED';

/** The queue's mark, for stats(). Params: queue. */
export const FOLD_MARK_SQL = 'SELECT last_id FROM jobq_fold_marks WHERE queue = ?';

/** The queue's mark, at the highest id, unless it has one (the recount of setup-tables). Params: queue. */
export const ADD_FOLD_MARK_SQL = (table: QuotedIdentifier) => `
  INSERT IGNORE INTO jobq_fold_marks (queue, last_id) SELECT ?, IFNULL(MAX(id), 0) FROM ${table}`;

/** Params: queue, last id. */
export const SET_FOLD_MARK_SQL = `
  INSERT INTO jobq_fold_marks (queue, last_id) VALUES (?, ?)
  ON DUPLICATE KEY UPDATE last_id = VALUES(last_id)`;

/**
 * The jobs after the mark, by id: whether each is waiting uncounted, and whether its insert
 * began more than a second ago (its statement has committed by now). Params: mark, limit.
 */
export const JOBS_AFTER_MARK_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind, status = 'unclaimed' AND claim_token = ${UNCOUNTED_TOKEN} AS uncounted, created_at < NOW(6) - INTERVAL 1 SECOND AS settled
    FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id > ?
   ORDER BY id LIMIT ?`;

/** Those of these jobs still waiting uncounted, locked; those a claim is taking are left to it. Params: [ids]. */
export const LOCK_UNCOUNTED_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id IN (?) AND status = 'unclaimed' AND claim_token = ${UNCOUNTED_TOKEN}
     FOR UPDATE SKIP LOCKED`;

/** Counted: the default claim token. Params: [ids]. */
export const MARK_COUNTED_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY) SET claim_token = DEFAULT WHERE id IN (?)`;

/**
 * Waiting jobs after the mark not counted yet, per kind: stats() adds them to the kept count. A
 * range of the primary key, as long as the jobs inserted since the last fold. Params: mark.
 */
export const COUNT_UNCOUNTED_SQL = (table: QuotedIdentifier) => `
  SELECT 'uncounted' AS scope, kind, 'unclaimed' AS status, COUNT(*) AS count
    FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id > ? AND status = 'unclaimed' AND claim_token = ${UNCOUNTED_TOKEN}
   GROUP BY kind`;
