import type { QuotedIdentifier } from '../../config/identifiers.js';
/**
 * Pausing kinds: a row per paused kind of each queue. It lives in the database, so a pause holds
 * for every worker on every machine and outlasts restarts. Every claim turn reads the queue's
 * rows in its first round trip (a primary key range of a table of a few rows).
 */

export const CREATE_PAUSED_KINDS_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_paused_kinds (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    kind VARCHAR(64) NOT NULL,
    paused_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (queue, kind)
  ) ENGINE = InnoDB COMMENT = 'jobq: kinds whose jobs no worker claims until resumed'`;

/** Params: queue, kind. */
export const PAUSE_KIND_SQL = 'INSERT IGNORE INTO jobq_paused_kinds (queue, kind) VALUES (?, ?)';

/** Params: queue, kind. */
export const RESUME_KIND_SQL = 'DELETE FROM jobq_paused_kinds WHERE queue = ? AND kind = ?';

/** Params: queue. */
export const PAUSED_KINDS_SQL = 'SELECT kind FROM jobq_paused_kinds WHERE queue = ? ORDER BY kind';

/**
 * The kinds that have jobs, for a claim of the whole queue while some kinds are paused: it then
 * reads kind by kind, so that a pile of paused jobs at the head of the queue is never read
 * through. One index dive per kind (a loose index scan of the kind index).
 */
export const KINDS_PRESENT_SQL = (table: QuotedIdentifier) => `
  SELECT DISTINCT kind FROM ${table} FORCE INDEX (kind_status_group_priority_run_after) WHERE kind IS NOT NULL`;
