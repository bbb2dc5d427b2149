/**
 * Lanes: rows of `jobq_lanes`, one per claim turn that may run at once against a queue. A claim
 * locks one with SKIP LOCKED inside its own transaction and reads candidates from that lane
 * (LANE_FILTER in sql/claim.ts) only, so concurrent claims never chase the same ids; the lock ends with
 * the claim's COMMIT, or with its connection. One table serves every queue of a database.
 */

export const CREATE_LANES_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_lanes (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    lane SMALLINT UNSIGNED NOT NULL,
    PRIMARY KEY (queue, lane)
  ) ENGINE = InnoDB COMMENT = 'jobq: one row per concurrent claim turn of each queue'`;

/** Lanes 0 .. count-1 of a queue (existing rows kept). Params: queue, once per lane. */
export const insertLanesSql = (count: number) =>
  `INSERT IGNORE INTO jobq_lanes (queue, lane) VALUES ${Array.from({ length: count }, (_, lane) => `(?, ${lane})`).join(', ')}`;

/** Drops lanes from `count` up. Params: queue, count. */
export const DELETE_LANES_FROM_SQL = 'DELETE FROM jobq_lanes WHERE queue = ? AND lane >= ?';

/** How many lanes a queue has. Params: queue. */
export const COUNT_LANES_SQL = 'SELECT COUNT(*) AS lanes FROM jobq_lanes WHERE queue = ?';

/**
 * Takes a lane into the session variable @jobq_lane, locked until COMMIT: the first free one from
 * `from` upwards, else the first free one below it; reads it (NULL: every lane was taken); and
 * when every lane was taken, waits for `from` until its holder commits (in the server, bounded by
 * innodb_lock_wait_timeout), which keeps the number of claims at once at the number of lanes.
 * Each is a range read in key order that stops at the first row nobody holds, or reads nothing
 * once an earlier one got a lane (its WHERE is then constant false). The candidate read that
 * follows in the same round trip reads the lane taken (TakenLane in sql/claim.ts): claims of four
 * workers that guessed their lane, and waited for it in round trips of their own, had read the
 * wrong lane in 60 % of their turns and then read again. Params: queue, from (each statement).
 */
export const TAKE_LANE_SQL = {
  firstFree: [
    `SET @jobq_lane = (
       SELECT lane FROM jobq_lanes FORCE INDEX (PRIMARY)
        WHERE queue = ? AND lane >= ?
        ORDER BY lane LIMIT 1
        FOR UPDATE SKIP LOCKED)`,
    `SET @jobq_lane = COALESCE(@jobq_lane, (
       SELECT lane FROM jobq_lanes FORCE INDEX (PRIMARY)
        WHERE @jobq_lane IS NULL AND queue = ? AND lane < ?
        ORDER BY lane LIMIT 1
        FOR UPDATE SKIP LOCKED))`,
  ],
  waitIfNone: `SET @jobq_lane = COALESCE(@jobq_lane, (
       SELECT lane FROM jobq_lanes FORCE INDEX (PRIMARY)
        WHERE @jobq_lane IS NULL AND queue = ? AND lane = ?
        FOR UPDATE))`,
} as const;

/** The lane TAKE_LANE_SQL holds so far (NULL: none). */
export const TAKEN_LANE_SQL = 'SELECT @jobq_lane AS lane';
