import type { QuotedIdentifier } from '../../config/identifiers.js';

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

/**
 * A row per group of a kind limited per group only, that claims lock (SKIP LOCKED) before they
 * count the group's running jobs and the jobs claimed within its rate's window, and write when they
 * take some (on Galera, what makes two nodes' claims of the group conflict). Claims of such a kind
 * lock its groups, not its row in jobq_limits: claims of different groups go side by side (one at
 * a time per kind drained 1,000 groups under a limit of 1 each at 0.18x the same drain unlimited,
 * this at 0.30x: bench-results/limits-before-group-locks.json, limits.json). A claim adds the rows
 * of groups it finds without one (waiting, the first time, for another claim adding the same).
 */
export const CREATE_GROUP_LOCKS_TABLE_SQL = (collation: string) => `
  CREATE TABLE IF NOT EXISTS jobq_group_locks (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    kind VARCHAR(64) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
    job_group VARCHAR(64) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
    claims BIGINT UNSIGNED NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, kind, job_group)
  ) ENGINE = InnoDB COMMENT = 'jobq: the groups of kinds limited per group, locked by claims'`;

/**
 * Adds the rows of groups that had none (sorted, so that two claims adding the same groups wait
 * for each other in one order). Params: per group, queue, kind, group.
 */
export const addGroupLocksSql = (groups: number) =>
  `INSERT IGNORE INTO jobq_group_locks (queue, kind, job_group) VALUES ${Array.from({ length: groups }, () => '(?, ?, ?)').join(', ')}`;

/** Locks the rows of these groups that no other claim holds. Params: queue, kind, [groups]. */
export const LOCK_GROUPS_SQL = 'SELECT job_group FROM jobq_group_locks WHERE queue = ? AND kind = ? AND job_group IN (?) FOR UPDATE SKIP LOCKED';

/**
 * Retention of these rows (prune): the kinds that have any, and their groups in order, a chunk
 * after a group. Params: queue; then queue, kind, after, limit.
 */
export const GROUP_LOCK_KINDS_SQL = 'SELECT DISTINCT kind FROM jobq_group_locks WHERE queue = ? ORDER BY kind';
export const GROUP_LOCKS_AFTER_SQL = 'SELECT job_group FROM jobq_group_locks WHERE queue = ? AND kind = ? AND job_group > ? ORDER BY job_group LIMIT ?';

/**
 * Deletes the rows of these groups that have no job of the kind waiting or running (three dives
 * of the kind index each): a tenant seen once does not keep a row forever. A row a claim holds is
 * waited for, and then has the claim's jobs; a claim that finds a group without a row adds it
 * again. Params: queue, kind, [groups].
 */
export const FORGET_IDLE_GROUP_LOCKS_SQL = (table: QuotedIdentifier) => `
  DELETE l FROM jobq_group_locks AS l
   WHERE l.queue = ? AND l.kind = ? AND l.job_group IN (?)
     AND NOT EXISTS (SELECT 1 FROM ${table} AS j FORCE INDEX (${INDEX})
                      WHERE j.kind = l.kind AND j.kind_status IN ('unclaimed', 'scheduled', 'claimed') AND j.job_group = l.job_group)`;

/** Marks the rows of the groups a claim took jobs of as written by it. Params: queue, kind, [groups]. */
export const TOUCH_GROUPS_SQL = 'UPDATE jobq_group_locks SET claims = claims + 1 WHERE queue = ? AND kind = ? AND job_group IN (?)';

/** The running jobs of these groups of a kind, read after their rows are locked. Params: kind, [groups]. */
export const RUNNING_BY_GROUP_SQL = (table: QuotedIdentifier) => `
  SELECT r.job_group, COUNT(*) AS running FROM ${table} AS r FORCE INDEX (${INDEX})
   WHERE r.kind = ? AND r.kind_status = 'claimed' AND r.job_group IN (?) AND r.waiting_priority = 0 AND r.kind_run_after > NOW(6)
   GROUP BY r.job_group`;

/** The jobs of these groups of a kind claimed within the window, read after their rows are locked. Params: queue, kind, [groups], window and margin in microseconds. */
export const SPENT_BY_GROUP_SQL = `
  SELECT c.job_group, SUM(c.jobs) AS spent FROM jobq_rate_claims AS c FORCE INDEX (spent)
   WHERE c.queue = ? AND c.kind = ? AND c.job_group IN (?) AND c.claimed_at > NOW(6) - INTERVAL ? MICROSECOND
   GROUP BY c.job_group`;

/** Params: per kind, queue and kind. */
export const addGroupedKindsSql = (kinds: number) => `INSERT IGNORE INTO jobq_grouped_kinds (queue, kind) VALUES ${Array.from({ length: kinds }, () => '(?, ?)').join(', ')}`;

/** Whether the group of the row `alias` has a row in jobq_group_locks. Params: queue, kind. */
const HAS_LOCK_ROW = (alias: string) => `EXISTS (SELECT 1 FROM jobq_group_locks AS l WHERE l.queue = ? AND l.kind = ? AND l.job_group = ${alias}.job_group)`;

/** The first group of a kind with waiting jobs whose name is `condition` (NULL: none). Params: kind[, and the condition's]. */
const nextGroup = (table: QuotedIdentifier, condition: string) => `
  (SELECT j.job_group FROM ${table} AS j FORCE INDEX (${INDEX})
    WHERE j.kind = ? AND j.kind_status = 'unclaimed' AND j.job_group ${condition} ORDER BY j.job_group LIMIT 1)`;

/**
 * The groups of a kind with waiting jobs from a group on, round the end to the first group again:
 * one index dive per group, whatever the groups hold (a window of the index read through big
 * groups: 2,000 entries for 20 groups of 100, and 1,000 groups drained at 0.42x the same jobs
 * without groups where this does at 0.57x: bench-results/limits-groups.json), in `steps`
 * statements that each set a session variable from the one before (neither server starts a range
 * read at a value from an outer query, but both at a variable's; a loose index scan does it in
 * one statement, but only while the index statistics say so: limits-groups-loose-scan.json). `@jobq_g0` is the first group at or after `from`; the last
 * statement returns them all in order, each with whether it has a row in jobq_group_locks when
 * `withLocks`; NULL where the kind has no group waiting. A group whose jobs are all delayed may be
 * among them. Params: kind, from; kind and kind per step; [queue, kind].
 */
export const groupChainSql = (table: QuotedIdentifier, steps: number, withLocks: boolean): string[] => [
  `SET @jobq_g0 = ${nextGroup(table, '>= ?')}`,
  ...Array.from({ length: steps }, (_, i) => `SET @jobq_g${i + 1} = IFNULL(${nextGroup(table, `> @jobq_g${i}`)}, ${nextGroup(table, 'IS NOT NULL')})`),
  `SELECT v.job_group, ${withLocks ? HAS_LOCK_ROW('v') : '1'} AS locks
     FROM (${Array.from({ length: steps + 1 }, (_, i) => `SELECT ${i} AS n, @jobq_g${i} AS job_group`).join(' UNION ALL ')}) AS v
    ORDER BY v.n`,
];

const DUE_IN_KIND = "j.kind = ? AND j.kind_status = 'unclaimed' AND j.kind_run_after <= NOW(6)";

/**
 * The due jobs of `groups` groups of a kind, each group's by priority, then age, at most `limit`
 * of each, group after group: one statement of a range read per group (a statement each cost the
 * server more than the reads). Params: per group, kind, group and limit.
 */
export const groupJobsSql = (table: QuotedIdentifier, groups: number) =>
  Array.from(
    { length: groups },
    () => `
  (SELECT j.id, j.waiting_priority AS priority, j.job_group FROM ${table} AS j FORCE INDEX (${INDEX})
    WHERE ${DUE_IN_KIND} AND j.job_group = ?
    ORDER BY j.waiting_priority, j.kind_run_after, j.id LIMIT ?)`,
  ).join(' UNION ALL');

/**
 * Claimed jobs of a kind with a group whose lease ran out, oldest first, with their groups (and
 * whether each group has a row in jobq_group_locks when `withLocks`): the kind's claimed entries,
 * as many as it has running, are read through. Params: [queue, kind,] kind, limit.
 */
export const expiredInGroupsSql = (table: QuotedIdentifier, withLocks: boolean) => `
  SELECT x.id, x.job_group, ${withLocks ? HAS_LOCK_ROW('x') : '1'} AS locks FROM ${table} AS x FORCE INDEX (${INDEX})
   WHERE x.kind = ? AND x.kind_status = 'claimed' AND x.job_group IS NOT NULL AND x.waiting_priority = 0 AND x.kind_run_after <= NOW(6)
   ORDER BY x.kind_run_after, x.id LIMIT ?`;

