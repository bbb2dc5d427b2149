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
 * id (one that took longer stays uncounted, and uncounted when claimed).
 *
 * A writer of such jobs holds a lease in jobq_uncounted_writers while it writes them, renewed in
 * the round trip of an insert (at most every few seconds). A fold that finds no lease running
 * since its mark was last moved (and a second more) knows no job after the mark is uncounted,
 * and moves the mark to the highest id without reading the jobs: a drain of jobs that large
 * inserts counted costs the folds nothing.
 */

export const CREATE_FOLD_MARKS_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_fold_marks (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    last_id BIGINT UNSIGNED NOT NULL,
    marked_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
  ) ENGINE = InnoDB COMMENT = 'jobq: the highest job id whose uncounted job, if waiting, was counted'`;

export const CREATE_UNCOUNTED_WRITERS_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_uncounted_writers (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    writer BINARY(16) NOT NULL,
    until TIMESTAMP(6) NOT NULL,
    PRIMARY KEY (queue, writer)
  ) ENGINE = InnoDB COMMENT = 'jobq: leases of the writers of jobs not counted yet'`;

/** How long a writer's lease runs from its renewal; the writer renews it when less than LEASE_MARGIN_MS is left. */
export const WRITER_LEASE_MS = 10_000;
export const WRITER_LEASE_MARGIN_MS = 5_000;

/** A writer's lease, from now. Params: queue, writer. */
export const RENEW_WRITER_LEASE_SQL = `
  INSERT INTO jobq_uncounted_writers (queue, writer, until) VALUES (?, ?, NOW(6) + INTERVAL ${WRITER_LEASE_MS * 1000} MICROSECOND)
  ON DUPLICATE KEY UPDATE until = VALUES(until)`;

/** The queue's mark, taken by one fold at a time (another skips its pass). Params: queue. */
export const LOCK_FOLD_MARK_SQL = 'SELECT last_id FROM jobq_fold_marks WHERE queue = ? FOR UPDATE SKIP LOCKED';

/**
 * Whether a writer's lease ran at some time since the queue's mark was last moved, less a second
 * (its last insert may have committed that long after its lease ended). Params: queue.
 */
export const WRITER_SINCE_MARK_SQL = `
  SELECT 1 AS writing FROM jobq_uncounted_writers AS w JOIN jobq_fold_marks AS m ON m.queue = w.queue
   WHERE w.queue = ? AND w.until > m.marked_at - INTERVAL 1 SECOND LIMIT 1`;

/** Leases that ended long ago. Params: queue. */
export const FORGET_WRITERS_SQL = 'DELETE FROM jobq_uncounted_writers WHERE queue = ? AND until < NOW(6) - INTERVAL 1 HOUR';

/** The queue's mark, at the highest id, unless it has one (the recount of setup-tables). Params: queue. */
export const ADD_FOLD_MARK_SQL = (table: QuotedIdentifier) => `
  INSERT IGNORE INTO jobq_fold_marks (queue, last_id) SELECT ?, IFNULL(MAX(id), 0) FROM ${table}`;

/**
 * Moves the mark; `marked_at` only when every job after it was read (`complete`: the writers'
 * leases since then are what a later fold asks about). Params: last id, complete (1 or 0), queue.
 */
export const SET_FOLD_MARK_SQL = 'UPDATE jobq_fold_marks SET last_id = ?, marked_at = IF(?, NOW(6), marked_at) WHERE queue = ?';

/**
 * The jobs after the mark, by id: whether each is waiting uncounted, and whether its insert
 * began more than a second ago (its statement has committed by now). Params: mark, limit.
 */
export const JOBS_AFTER_MARK_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind, status IN ('unclaimed', 'scheduled') AND claim_token = ${UNCOUNTED_TOKEN} AS uncounted, created_at < NOW(6) - INTERVAL 1 SECOND AS settled
    FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id > ?
   ORDER BY id LIMIT ?`;

/** Those of these jobs still waiting uncounted, locked; those a claim is taking are left to it. Params: [ids]. */
export const LOCK_UNCOUNTED_SQL = (table: QuotedIdentifier) => `
  SELECT id, kind FROM ${table} FORCE INDEX (PRIMARY)
   WHERE id IN (?) AND status IN ('unclaimed', 'scheduled') AND claim_token = ${UNCOUNTED_TOKEN}
     FOR UPDATE SKIP LOCKED`;

/** Counted: the default claim token. Params: [ids]. */
export const MARK_COUNTED_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY) SET claim_token = DEFAULT WHERE id IN (?)`;
