import type { QuotedIdentifier } from '../../config/identifiers.js';
import { addColumnsOnceSql } from '../../db/add-columns-once.js';
import { exactCollation, type ServerVersion } from '../../db/server-version.js';
/**
 * Limits on kinds: a row per limited kind of each queue, shared by every queue of the database
 * like jobq_paused_kinds, so a limit holds for every worker on every machine and outlasts
 * restarts. NULL in a column: no limit of that sort.
 * - `concurrency`: at most that many jobs of the kind running at once, a job running from its
 *   claim until it is settled or its lease runs out; `group_concurrency`: the same for the jobs of
 *   each group of the kind.
 * - `rate_jobs` per `rate_seconds`: at most that many jobs of the kind claimed in any window of
 *   that length; `group_rate_*`: the same for each group.
 *
 * A claim of a limited kind locks the kind's row (SKIP LOCKED: a claim never waits on a limit, it
 * leaves the kind to the claim that holds the row), counts the kind's running jobs (and those of
 * the groups it reads, sql/groups.ts) in the jobs table itself, and the jobs claimed within the
 * rate's window in jobq_rate_claims, and claims at most what is left, all in its one transaction.
 * Nothing is counted up and down: a worker killed with SIGKILL frees its slots when its leases end,
 * as its jobs become claimable again, never earlier and never twice. Every claim that takes jobs
 * under a limit also writes the row (`claims`): on Galera, where row locks are local to a node, two
 * nodes' claims of the kind then conflict at certification and one runs again, counting anew.
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
 * Schema 15: limits per group, and rates. jobq_limits is shared, so a later queue's migration
 * finds the columns there already (add-columns-once.ts). jobq_rate_claims logs the jobs each claim under a
 * rate took, kind-wide (`job_group` '') and per group, for as long as a window can reach back.
 */
export const groupAndRateLimitsSql = (server: ServerVersion) => `
  ${addColumnsOnceSql(
    'jobq_limits',
    'group_concurrency',
    `MODIFY concurrency INT UNSIGNED NULL DEFAULT NULL,
       ADD COLUMN group_concurrency INT UNSIGNED NULL DEFAULT NULL AFTER concurrency,
       ADD COLUMN rate_jobs INT UNSIGNED NULL DEFAULT NULL AFTER group_concurrency,
       ADD COLUMN rate_seconds INT UNSIGNED NULL DEFAULT NULL AFTER rate_jobs,
       ADD COLUMN group_rate_jobs INT UNSIGNED NULL DEFAULT NULL AFTER rate_seconds,
       ADD COLUMN group_rate_seconds INT UNSIGNED NULL DEFAULT NULL AFTER group_rate_jobs`,
  )};
  CREATE TABLE IF NOT EXISTS jobq_rate_claims (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    kind VARCHAR(64) CHARACTER SET utf8mb4 COLLATE ${exactCollation(server)} NOT NULL,
    job_group VARCHAR(64) CHARACTER SET utf8mb4 COLLATE ${exactCollation(server)} NOT NULL,
    claimed_at TIMESTAMP(6) NOT NULL,
    jobs INT UNSIGNED NOT NULL,
    KEY spent (queue, kind, job_group, claimed_at),
    KEY age (queue, kind, claimed_at)
  ) ENGINE = InnoDB COMMENT = 'jobq: jobs claimed under a rate limit, while its window lasts'`;

/** The kind a limit on every kind together is stored under: not a kind any job may have (new-jobs.ts, checkKind). */
export const EVERY_KIND = '*';

/** The columns of a kind's limits, in the order SET_LIMIT_SQL takes them after queue and kind. */
export const LIMIT_COLUMNS = ['concurrency', 'group_concurrency', 'rate_jobs', 'rate_seconds', 'group_rate_jobs', 'group_rate_seconds'] as const;

/** Sets a kind's limits, or changes them (NULL: none). Params: queue, kind, then one per LIMIT_COLUMNS. */
export const SET_LIMIT_SQL = `
  INSERT INTO jobq_limits (queue, kind, ${LIMIT_COLUMNS.join(', ')}) VALUES (?, ?, ${LIMIT_COLUMNS.map(() => '?').join(', ')})
  ON DUPLICATE KEY UPDATE ${LIMIT_COLUMNS.map((column) => `${column} = VALUES(${column})`).join(', ')}, set_at = NOW(6)`;

/** Params: queue, kind. */
export const REMOVE_LIMIT_SQL = 'DELETE FROM jobq_limits WHERE queue = ? AND kind = ?';

/** The queue's limits, with the jobs of each kind running now. Params: queue. */
export const LIMITS_SQL = (table: QuotedIdentifier) => `
  SELECT l.kind, ${LIMIT_COLUMNS.map((column) => `l.${column}`).join(', ')},
         IF(l.kind = '${EVERY_KIND}',
            (SELECT COUNT(*) FROM ${table} AS j FORCE INDEX (status_priority_run_after) WHERE ${RUNNING_ANY}),
            (SELECT COUNT(*) FROM ${table} AS j FORCE INDEX (kind_status_group_priority_run_after) WHERE j.kind = l.kind AND ${RUNNING})) AS running
    FROM jobq_limits AS l WHERE l.queue = ? ORDER BY l.kind`;

/** The kinds a claim turn must claim under their limit. Params: queue. */
export const LIMITED_KINDS_SQL = 'SELECT kind FROM jobq_limits WHERE queue = ? ORDER BY kind';

/**
 * Jobs of a kind that hold a lease that has not run out, as ranges of the kind index (claimed jobs
 * are at waiting_priority 0, see schema 6): claimed and not yet settled, or settled by none.
 */
const RUNNING = `j.kind_status = 'claimed' AND j.waiting_priority = 0 AND j.kind_run_after > NOW(6)`;

/** Jobs of any kind that hold a lease that has not run out, as a range of the status index. */
const RUNNING_ANY = `j.status = 'claimed' AND j.waiting_priority = 0 AND j.run_after > NOW(6)`;

/**
 * A claim's look at the limits of the kinds it may take: reads them, locks the rows that no other
 * claim holds of those with a limit on the kind as a whole (those limited per group only are
 * claimed under their groups' rows, sql/groups.ts), then counts the running jobs of each kind with
 * a concurrency limit. One round trip: the count runs after the locks, and at READ COMMITTED sees
 * every claim committed by whoever held a row before. Params: queue, [kinds] each.
 */
export const READ_LIMITS_SQL = `SELECT kind, ${LIMIT_COLUMNS.join(', ')} FROM jobq_limits WHERE queue = ? AND kind IN (?)`;
export const LOCK_LIMITS_SQL = `
  SELECT kind FROM jobq_limits WHERE queue = ? AND kind IN (?) AND (concurrency IS NOT NULL OR rate_jobs IS NOT NULL) FOR UPDATE SKIP LOCKED`;
export const COUNT_RUNNING_SQL = (table: QuotedIdentifier) => `
  SELECT j.kind, COUNT(*) AS running FROM jobq_limits AS l
    JOIN ${table} AS j FORCE INDEX (kind_status_group_priority_run_after) ON j.kind = l.kind AND ${RUNNING}
   WHERE l.queue = ? AND l.kind IN (?) AND l.concurrency IS NOT NULL GROUP BY j.kind`;

/** Whether a kind's limits are on its groups only: claims of it then lock its groups' rows, not the kind's. */
export const limitedPerGroupOnly = (limit: Record<(typeof LIMIT_COLUMNS)[number], number | null>) => limit.concurrency === null && limit.rate_jobs === null;

/** The jobs of every kind running now, for a limit on them together (EVERY_KIND). */
export const COUNT_ALL_RUNNING_SQL = (table: QuotedIdentifier) => `
  SELECT COUNT(*) AS running FROM ${table} AS j FORCE INDEX (status_priority_run_after) WHERE ${RUNNING_ANY}`;

/**
 * Of the running jobs, those the claim's own turn settles, by kind (a finished job's slot is free
 * at the COMMIT that claims into it). By primary key, and by the token that holds each: a job
 * another claim took after its lease ran out is not ours to count out. Params: [ids], [[id, token]].
 */
export const COUNT_SETTLING_SQL = (table: QuotedIdentifier) => `
  SELECT j.kind, COUNT(*) AS settling FROM ${table} AS j FORCE INDEX (PRIMARY)
   WHERE j.id IN (?) AND (j.id, j.claim_token) IN (?) AND ${RUNNING_ANY} GROUP BY j.kind`;

/** Marks the limit rows of the kinds a claim took jobs of as written by it. Params: queue, [kinds]. */
export const TOUCH_LIMITS_SQL = 'UPDATE jobq_limits SET claims = claims + 1 WHERE queue = ? AND kind IN (?)';

/**
 * A claim counts the jobs claimed within a rate's window and this much before it: a job starts a
 * few milliseconds after its claim, and the margin keeps the handlers' starts within the rate too
 * where one starts up to this much later than another. Every millisecond of it costs a rate of a
 * second 0.1 % of its pace: with 50 ms, 1,000 a second ran at 0.93x (bench-results/limits.json).
 */
export const RATE_MARGIN_MICROSECONDS = 10_000;

/**
 * The jobs of each kind claimed within its rate's window (and the margin), kind-wide. Read after
 * the limit rows are locked: every claim under the rate committed before is counted. Params:
 * margin in microseconds, queue, [kinds].
 */
export const RATE_SPENT_SQL = `
  SELECT c.kind, SUM(c.jobs) AS spent FROM jobq_limits AS l
    JOIN jobq_rate_claims AS c FORCE INDEX (spent)
      ON c.queue = l.queue AND c.kind = l.kind AND c.job_group = ''
     AND c.claimed_at > NOW(6) - INTERVAL (l.rate_seconds * 1000000 + ?) MICROSECOND
   WHERE l.queue = ? AND l.kind IN (?) AND l.rate_jobs IS NOT NULL
   GROUP BY c.kind`;

/** Logs jobs a claim took under rates: rows of (queue, kind, group or '', jobs), claimed now. */
export const logRateClaimsSql = (rows: number) => `
  INSERT INTO jobq_rate_claims (queue, kind, job_group, claimed_at, jobs) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, NOW(6), ?)').join(', ')}`;

/** Forgets claims no window reaches any more. Params: queue, kind, how far back windows reach in microseconds. */
export const FORGET_RATE_CLAIMS_SQL = `
  DELETE FROM jobq_rate_claims WHERE queue = ? AND kind = ? AND claimed_at < NOW(6) - INTERVAL ? MICROSECOND`;
