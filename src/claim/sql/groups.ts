import type { QuotedIdentifier } from '../../config/identifiers.js';

/**
 * Groups: claims that share a kind between the groups of its jobs (round-robin, fair-share.ts) and
 * hold a limit per group read the kind index (kind, kind_status, job_group, waiting_priority,
 * kind_run_after) of schema 15. There each group of a kind is a range, its waiting jobs in
 * priority and age order, its running jobs another: every read below is an index dive or a range
 * that stops after its LIMIT. The kind's jobs without a group are the NULL range, read as any
 * kind's are (sql/claim.ts).
 *
 * The groups of a kind that have due jobs are found by skipping from one group to the next (a
 * dive per group, `job_group > the last one found`), in a recursive CTE: one statement, however
 * many groups, and neither server has a loose index scan that would skip them by itself. A group
 * whose waiting jobs are all delayed is read through once per dive that passes it.
 */

const INDEX = 'kind_status_group_priority_run_after';

/**
 * The next `count` values of `column` after `after` (exclusive) in index order, one dive each,
 * among the entries matching `where` (conditions on the index columns, with `?` params given once
 * per dive in `values`), in the CTE `found (value, n)`. Params: ...values, after, ...values, count.
 */
function skipScan(table: QuotedIdentifier, column: string, where: string): string {
  const next = (after: string) => `(SELECT j.${column} FROM ${table} AS j FORCE INDEX (${INDEX}) WHERE ${where} AND j.${column} > ${after} ORDER BY j.${column} LIMIT 1)`;
  return `
  WITH RECURSIVE found (value, n) AS (
    SELECT ${next('?')}, 1
    UNION ALL
    SELECT ${next('found.value')}, found.n + 1 FROM found WHERE found.value IS NOT NULL AND found.n < ?)`;
}

/**
 * The kinds with waiting jobs that carry a group: the kinds a claim shares between groups. A dive
 * to each kind, and one into its waiting jobs with a group (past those without, which sort first).
 */
export const GROUPED_KINDS_SQL = (table: QuotedIdentifier) => `${skipScan(table, 'kind', 'j.kind IS NOT NULL')}
  SELECT value AS kind FROM found
   WHERE value IS NOT NULL
     AND EXISTS (SELECT 1 FROM ${table} AS g FORCE INDEX (${INDEX}) WHERE g.kind = found.value AND g.kind_status = 'unclaimed' AND g.job_group IS NOT NULL)`;

/** At most this many kinds are looked at for groups (a dive or two each, every time the rules are read). */
const MOST_KINDS = 500;

/** Params for GROUPED_KINDS_SQL. */
export const groupedKindsValues = (): unknown[] => ['', MOST_KINDS];

const DUE_IN_KIND = "j.kind = ? AND j.kind_status = 'unclaimed' AND j.kind_run_after <= NOW(6)";

/** Jobs of a group that hold a lease that has not run out (claimed jobs are at waiting_priority 0): what a limit per group counts. */
const RUNNING_IN_GROUP = (table: QuotedIdentifier, group: string) => `
    (SELECT COUNT(*) FROM ${table} AS r FORCE INDEX (${INDEX})
      WHERE r.kind = ? AND r.kind_status = 'claimed' AND r.job_group = ${group} AND r.waiting_priority = 0 AND r.kind_run_after > NOW(6))`;

/**
 * The groups of a kind with due jobs, in order after `after` (exclusive; '' for the first), at
 * most `count`, each with its running jobs when `withRunning` (else 0). Params: kind, after,
 * kind, count[, kind].
 */
export const groupsAfterSql = (table: QuotedIdentifier, withRunning: boolean) => `${skipScan(table, 'job_group', DUE_IN_KIND)}
  SELECT value AS job_group, ${withRunning ? RUNNING_IN_GROUP(table, 'found.value') : '0'} AS running FROM found WHERE value IS NOT NULL`;

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
