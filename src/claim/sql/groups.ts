import type { QuotedIdentifier } from '../../config/identifiers.js';
import { groupRateSpentSql } from './limits.js';

/**
 * Groups: claims that share a kind between the groups of its jobs (round-robin, fair-share.ts) and
 * hold limits per group read the kind index (kind, kind_status, job_group, waiting_priority,
 * kind_run_after) of schema 15. There each group of a kind is a range, its waiting jobs in
 * priority and age order, its running jobs another. The kind's jobs without a group are the NULL
 * range, read as any kind's are (sql/claim.ts).
 */

const INDEX = 'kind_status_group_priority_run_after';

/**
 * The kinds whose jobs have carried a group (jobq_grouped_kinds): the kinds claims share between
 * groups. An enqueue of a job with a group adds its kind first (JobInserts); a kind stays in once
 * added. Not read from the jobs table: finding the kinds that have waiting jobs with a group took
 * a read through the index there, because neither server can start a range read at a value from
 * the outer query (46 ms with 300,000 done jobs, in every worker's rules read:
 * bench-results/groups-skip-scan-ab.json).
 */
export const CREATE_GROUPED_KINDS_TABLE_SQL = (collation: string) => `
  CREATE TABLE IF NOT EXISTS jobq_grouped_kinds (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    kind VARCHAR(64) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
    PRIMARY KEY (queue, kind)
  ) ENGINE = InnoDB COMMENT = 'jobq: kinds whose jobs carry groups'`;

/** Params: queue. */
export const GROUPED_KINDS_SQL = 'SELECT kind FROM jobq_grouped_kinds WHERE queue = ? ORDER BY kind';

/** Params: per kind, queue and kind. */
export const addGroupedKindsSql = (kinds: number) => `INSERT IGNORE INTO jobq_grouped_kinds (queue, kind) VALUES ${Array.from({ length: kinds }, () => '(?, ?)').join(', ')}`;

/**
 * How many index entries of a kind's waiting jobs with a group a claim reads to find the groups
 * after its rotation's place: a bound, so that a group with 100,000 waiting jobs costs no more to
 * pass than one with 10. The claim that reads into a big group takes from it and moves its
 * rotation there; the next starts after it, a dive away.
 */
const GROUP_WINDOW = 2000;

/** Jobs of a group that hold a lease that has not run out (claimed jobs are at waiting_priority 0): what a limit per group counts. */
const RUNNING_IN_GROUP = (table: QuotedIdentifier) => `
    (SELECT COUNT(*) FROM ${table} AS r FORCE INDEX (${INDEX})
      WHERE r.kind = ? AND r.kind_status = 'claimed' AND r.job_group = w.job_group AND r.waiting_priority = 0 AND r.kind_run_after > NOW(6))`;

/**
 * The groups of a kind with waiting jobs among the first GROUP_WINDOW index entries after `after`
 * (exclusive, '' for the first group; `from`: inclusive), at most `count`, in order, each with its
 * running jobs when `withRunning`, and the jobs claimed within its rate's window when `withSpent`
 * (else 0). A group whose jobs are all delayed may be among them. Params: [kind,] [queue, kind,
 * window and margin in microseconds,] kind, after, count.
 */
export const groupsAfterSql = (table: QuotedIdentifier, withRunning: boolean, withSpent: boolean, from = false) => `
  SELECT w.job_group, ${withRunning ? RUNNING_IN_GROUP(table) : '0'} AS running, ${withSpent ? groupRateSpentSql('w.job_group') : '0'} AS spent
    FROM (SELECT DISTINCT e.job_group FROM (
            SELECT j.job_group FROM ${table} AS j FORCE INDEX (${INDEX})
             WHERE j.kind = ? AND j.kind_status = 'unclaimed' AND j.job_group ${from ? '>=' : '>'} ?
             ORDER BY j.job_group LIMIT ${GROUP_WINDOW}) AS e) AS w
   ORDER BY w.job_group LIMIT ?`;

const DUE_IN_KIND = "j.kind = ? AND j.kind_status = 'unclaimed' AND j.kind_run_after <= NOW(6)";

/** A group's due jobs by priority, then age. Params: kind, group, limit. */
export const groupJobsSql = (table: QuotedIdentifier) => `
  (SELECT j.id, j.waiting_priority AS priority, j.job_group FROM ${table} AS j FORCE INDEX (${INDEX})
    WHERE ${DUE_IN_KIND} AND j.job_group = ?
    ORDER BY j.waiting_priority, j.kind_run_after, j.id LIMIT ?)`;

/**
 * Claimed jobs of a kind with a group whose lease ran out, oldest first, with their groups: the
 * kind's claimed entries, as many as it has running, are read through. Params: kind, limit.
 */
export const EXPIRED_IN_GROUPS_SQL = (table: QuotedIdentifier) => `
  SELECT id, job_group FROM ${table} FORCE INDEX (${INDEX})
   WHERE kind = ? AND kind_status = 'claimed' AND job_group IS NOT NULL AND waiting_priority = 0 AND kind_run_after <= NOW(6)
   ORDER BY kind_run_after, id LIMIT ?`;
