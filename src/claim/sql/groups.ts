import type { QuotedIdentifier } from '../../config/identifiers.js';

/**
 * Groups: claims that share a kind between the groups of its jobs (round-robin, fair-share.ts) and
 * hold a limit per group read the group index of schema 15, (group_status, kind, job_group,
 * group_priority, group_run_after), whose columns are set only for jobs with a group. There each
 * group of a kind is a range, its waiting jobs in priority and age order, its running jobs
 * another range: every read below is an index dive or a range that stops after its LIMIT.
 *
 * The groups of a kind that have due jobs are found by skipping from one group to the next (a
 * dive per group, `job_group > the last one found`), in a recursive CTE: one statement, however
 * many groups, and neither server has a loose index scan that would skip them by itself. A group
 * whose waiting jobs are all delayed is read through once per dive that passes it.
 */

const INDEX = 'group_status_kind_priority_run_after';

/**
 * The next `count` values of `column` after `after` (exclusive) in index order, one dive each,
 * among the entries matching `where` (conditions on the index columns before it, with `?`
 * params given once per dive in `values`). Params: ...values, after, ...values, count.
 */
function skipScan(table: QuotedIdentifier, column: string, where: string): string {
  const next = (after: string) => `(SELECT j.${column} FROM ${table} AS j FORCE INDEX (${INDEX}) WHERE ${where} AND j.${column} > ${after} ORDER BY j.${column} LIMIT 1)`;
  return `
  WITH RECURSIVE found (value, n) AS (
    SELECT ${next('?')}, 1
    UNION ALL
    SELECT ${next('found.value')}, found.n + 1 FROM found WHERE found.value IS NOT NULL AND found.n < ?)`;
}

/** The kinds with waiting jobs that carry a group: the kinds a claim shares between groups. */
export const GROUPED_KINDS_SQL = (table: QuotedIdentifier) => `${skipScan(table, 'kind', "j.group_status = 'unclaimed'")}
  SELECT value AS kind FROM found WHERE value IS NOT NULL`;

/** At most this many grouped kinds are seen (a dive each, every time the rules are read). */
export const MOST_GROUPED_KINDS = 200;

/** Params for GROUPED_KINDS_SQL. */
export const groupedKindsValues = (): unknown[] => ['', MOST_GROUPED_KINDS];

const DUE_IN_KIND = "j.group_status = 'unclaimed' AND j.kind = ? AND j.group_run_after <= NOW(6)";

/**
 * Jobs of a group that hold a lease that has not run out (claimed jobs are at group_priority 0,
 * as in the kind index): what a limit per group counts.
 */
const RUNNING_IN_GROUP = (table: QuotedIdentifier, group: string) => `
    (SELECT COUNT(*) FROM ${table} AS r FORCE INDEX (${INDEX})
      WHERE r.group_status = 'claimed' AND r.kind = ? AND r.job_group = ${group} AND r.group_priority = 0 AND r.group_run_after > NOW(6))`;

/**
 * The groups of a kind with due jobs, in order after `after` (exclusive; '' for the first), at
 * most `count`, each with its running jobs when `withRunning` (else 0). Params: kind, after,
 * kind, count[, kind].
 */
export const groupsAfterSql = (table: QuotedIdentifier, withRunning: boolean) => `${skipScan(table, 'job_group', DUE_IN_KIND)}
  SELECT value AS job_group, ${withRunning ? RUNNING_IN_GROUP(table, 'found.value') : '0'} AS running FROM found WHERE value IS NOT NULL`;

/** A group's due jobs by priority, then age. Params: kind, group, limit. */
export const groupJobsSql = (table: QuotedIdentifier) => `
  (SELECT j.id, j.group_priority AS priority, j.job_group FROM ${table} AS j FORCE INDEX (${INDEX})
    WHERE ${DUE_IN_KIND} AND j.job_group = ?
    ORDER BY j.group_priority, j.group_run_after, j.id LIMIT ?)`;

/**
 * Claimed jobs of a kind whose lease ran out, oldest first, with their groups (a row read each:
 * they are few). Params: kind, limit.
 */
export const EXPIRED_WITH_GROUPS_SQL = (table: QuotedIdentifier) => `
  SELECT id, job_group FROM ${table} FORCE INDEX (kind_status_priority_run_after)
   WHERE kind = ? AND kind_status = 'claimed' AND waiting_priority = 0 AND kind_run_after <= NOW(6)
   ORDER BY kind_run_after, id LIMIT ?`;

/**
 * The due jobs of a kind without a group, among the kind's first `limit` due jobs by priority and
 * age (the kind index does not know groups; a row read each tells). Those further back wait until
 * the jobs of groups ahead of them are taken. Params: kind, limit.
 */
export const UNGROUPED_AMONG_FIRST_SQL = (table: QuotedIdentifier) => `
  SELECT id, priority FROM (
    SELECT id, job_group, waiting_priority AS priority FROM ${table} FORCE INDEX (kind_status_priority_run_after)
     WHERE kind = ? AND kind_status = 'unclaimed' AND kind_run_after <= NOW(6)
     ORDER BY waiting_priority, kind_run_after, id LIMIT ?) AS first_due
   WHERE job_group IS NULL`;
