import type { QuotedIdentifier } from '../../config/identifiers.js';
import { exactCollation, type ServerVersion } from '../../db/server-version.js';
/**
 * Limits on kinds: a row per limited kind of each queue, shared by every queue of the database
 * like jobq_paused_kinds, so a limit holds for every worker on every machine and outlasts
 * restarts. `concurrency`: at most that many jobs of the kind running at once, a job running from
 * its claim until it is settled or its lease runs out; `group_concurrency`: the same for the jobs of
 * each group of the kind (NULL: no such limit).
 *
 * A claim of a limited kind locks the kind's row (SKIP LOCKED: a claim never waits on a limit, it
 * leaves the kind to the claim that holds the row), counts the kind's running jobs (and those of
 * the groups it reads, sql/groups.ts) in the jobs table itself, and claims at most the difference,
 * all in its one transaction. Nothing is counted
 * up and down: a worker killed with SIGKILL frees its slots when its leases end, as its jobs become
 * claimable again, never earlier and never twice. Every claim that takes jobs under a limit also
 * writes the row (`claims`): on Galera, where row locks are local to a node, two nodes' claims of
 * the kind then conflict at certification and one runs again, counting anew.
 */

export const createLimitsTableSql = (server: ServerVersion) => `
  CREATE TABLE IF NOT EXISTS jobq_limits (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    kind VARCHAR(64) CHARACTER SET utf8mb4 COLLATE ${exactCollation(server)} NOT NULL,
    concurrency INT UNSIGNED NOT NULL,
    claims BIGINT UNSIGNED NOT NULL DEFAULT 0,
    set_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (queue, kind)
  ) ENGINE = InnoDB COMMENT = 'jobq: limits on the jobs of a kind'`;

/**
 * Schema 15: limits per group. The table is shared, so a later queue's migration finds the column
 * there already; the ALTER runs only where it is missing (neither server has ADD COLUMN IF NOT
 * EXISTS in common).
 */
export const GROUP_LIMITS_SQL = `
  SET @jobq_alter = IF((SELECT COUNT(*) FROM information_schema.COLUMNS
                         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'jobq_limits' AND COLUMN_NAME = 'group_concurrency') = 0,
    'ALTER TABLE jobq_limits MODIFY concurrency INT UNSIGNED NULL DEFAULT NULL, ADD COLUMN group_concurrency INT UNSIGNED NULL DEFAULT NULL AFTER concurrency',
    'DO 0');
  PREPARE jobq_alter FROM @jobq_alter;
  EXECUTE jobq_alter;
  DEALLOCATE PREPARE jobq_alter`;

/** Sets a kind's limits, or changes them (NULL: none). Params: queue, kind, concurrency, group concurrency. */
export const SET_LIMIT_SQL = `
  INSERT INTO jobq_limits (queue, kind, concurrency, group_concurrency) VALUES (?, ?, ?, ?)
  ON DUPLICATE KEY UPDATE concurrency = VALUES(concurrency), group_concurrency = VALUES(group_concurrency), set_at = NOW(6)`;

/** Params: queue, kind. */
export const REMOVE_LIMIT_SQL = 'DELETE FROM jobq_limits WHERE queue = ? AND kind = ?';

/** The queue's limits, with the jobs of each kind running now. Params: queue. */
export const LIMITS_SQL = (table: QuotedIdentifier) => `
  SELECT l.kind, l.concurrency, l.group_concurrency,
         (SELECT COUNT(*) FROM ${table} AS j FORCE INDEX (kind_status_group_priority_run_after)
           WHERE j.kind = l.kind AND ${RUNNING}) AS running
    FROM jobq_limits AS l WHERE l.queue = ? ORDER BY l.kind`;

/** The kinds a claim turn must claim under their limit. Params: queue. */
export const LIMITED_KINDS_SQL = 'SELECT kind FROM jobq_limits WHERE queue = ? ORDER BY kind';

/**
 * Jobs of a kind that hold a lease that has not run out, as ranges of the kind index (claimed jobs
 * are at waiting_priority 0, see schema 6): claimed and not yet settled, or settled by none.
 */
const RUNNING = `j.kind_status = 'claimed' AND j.waiting_priority = 0 AND j.kind_run_after > NOW(6)`;

/**
 * A claim's look at the limits of the kinds it may take: locks their rows that no other claim
 * holds, then counts each kind's running jobs. One round trip: the count runs after the locks, and
 * at READ COMMITTED sees every claim committed by whoever held a row before. Params: queue,
 * [kinds], [kinds].
 */
export const LOCK_LIMITS_SQL = `
  SELECT kind, concurrency, group_concurrency FROM jobq_limits WHERE queue = ? AND kind IN (?) FOR UPDATE SKIP LOCKED`;
export const COUNT_RUNNING_SQL = (table: QuotedIdentifier) => `
  SELECT j.kind, COUNT(*) AS running FROM ${table} AS j FORCE INDEX (kind_status_group_priority_run_after)
   WHERE j.kind IN (?) AND ${RUNNING} GROUP BY j.kind`;

/** Marks the limit rows of the kinds a claim took jobs of as written by it. Params: queue, [kinds]. */
export const TOUCH_LIMITS_SQL = 'UPDATE jobq_limits SET claims = claims + 1 WHERE queue = ? AND kind IN (?)';
