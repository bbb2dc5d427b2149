/**
 * Jobs completed, failed for good and retried, per queue and kind, kept as running totals: a
 * deleted job leaves no row to count. Workers add to them in the COMMIT round trip of the claim
 * turn that settles the jobs, so they cost a statement but no round trip. Each claim turn adds to
 * the row of its own lane (`shard`): no two turns in flight hold a lane, so they never wait for
 * each other's counter row. Jobs without a kind count under ''; so do the claims and empty claims
 * (claims that found candidates but locked none), which have no kind.
 */

export const CREATE_COUNTERS_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_counters (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    kind VARCHAR(64) NOT NULL,
    shard SMALLINT UNSIGNED NOT NULL,
    completed BIGINT UNSIGNED NOT NULL DEFAULT 0,
    failed BIGINT UNSIGNED NOT NULL DEFAULT 0,
    retried BIGINT UNSIGNED NOT NULL DEFAULT 0,
    claims BIGINT UNSIGNED NOT NULL DEFAULT 0,
    empty_claims BIGINT UNSIGNED NOT NULL DEFAULT 0,
    PRIMARY KEY (queue, kind, shard)
  ) ENGINE = InnoDB COMMENT = 'jobq: jobs completed, failed and retried, per kind, since the table was made'`;

/** Adds to the totals, one row per kind. Params per row: queue, kind, shard, completed, failed, retried, claims, empty claims. */
export const addCountsSql = (rows: number) => `
  INSERT INTO jobq_counters (queue, kind, shard, completed, failed, retried, claims, empty_claims) VALUES
  ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
  ON DUPLICATE KEY UPDATE completed = completed + VALUES(completed), failed = failed + VALUES(failed),
    retried = retried + VALUES(retried), claims = claims + VALUES(claims), empty_claims = empty_claims + VALUES(empty_claims)`;

/** The totals per kind. Params: queue. */
export const TOTALS_BY_KIND_SQL = `
  SELECT kind, SUM(completed) AS completed, SUM(failed) AS failed, SUM(retried) AS retried,
         SUM(claims) AS claims, SUM(empty_claims) AS empty_claims
    FROM jobq_counters WHERE queue = ? GROUP BY kind ORDER BY kind`;
