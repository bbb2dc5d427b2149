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
 * The first free lane from `from` upwards, locked until COMMIT; none when all of them are taken.
 * A range read in key order that stops at the first row nobody holds. Params: queue, from.
 */
export const LOCK_FREE_LANE_SQL = `
  SELECT lane FROM jobq_lanes FORCE INDEX (PRIMARY)
   WHERE queue = ? AND lane >= ?
   ORDER BY lane LIMIT 1
   FOR UPDATE SKIP LOCKED`;

/** The first free lane below `below` (the wrap-around of LOCK_FREE_LANE_SQL). Params: queue, below. */
export const LOCK_FREE_LANE_BELOW_SQL = `
  SELECT lane FROM jobq_lanes FORCE INDEX (PRIMARY)
   WHERE queue = ? AND lane < ?
   ORDER BY lane LIMIT 1
   FOR UPDATE SKIP LOCKED`;

/**
 * Every lane is in use: wait (in the server, bounded by innodb_lock_wait_timeout) for this one.
 * What keeps the number of claims at once at the number of lanes. Params: queue, lane.
 */
export const WAIT_FOR_LANE_SQL = `
  SELECT lane FROM jobq_lanes FORCE INDEX (PRIMARY)
   WHERE queue = ? AND lane = ?
   FOR UPDATE`;
