/**
 * Recurring jobs: a row per schedule of each queue. Times are handed over as Unix seconds with
 * microseconds (UNIX_TIMESTAMP / FROM_UNIXTIME), which mean the same whatever the session's time
 * zone; the server's clock decides what is due.
 */

export const CREATE_SCHEDULES_TABLE_SQL = `
  CREATE TABLE IF NOT EXISTS jobq_schedules (
    queue VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    name VARCHAR(64) NOT NULL,
    cron VARCHAR(200) NOT NULL,
    time_zone VARCHAR(64) NOT NULL,
    kind VARCHAR(64) NOT NULL,
    payload JSON NULL,
    priority SMALLINT NOT NULL DEFAULT 0,
    catch_up ENUM('latest', 'all') NOT NULL DEFAULT 'latest',
    next_tick TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    last_tick TIMESTAMP(6) NULL DEFAULT NULL,
    created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (queue, name),
    KEY due (queue, next_tick)
  ) ENGINE = InnoDB COMMENT = 'jobq: recurring jobs, ticked by whichever worker comes first'`;

/** Creates or replaces a schedule. Params: queue, name, cron, time zone, kind, payload, priority, catch-up, next tick (Unix s). */
export const UPSERT_SCHEDULE_SQL = `
  INSERT INTO jobq_schedules (queue, name, cron, time_zone, kind, payload, priority, catch_up, next_tick)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, FROM_UNIXTIME(?))
  ON DUPLICATE KEY UPDATE cron = VALUES(cron), time_zone = VALUES(time_zone), kind = VALUES(kind),
    payload = VALUES(payload), priority = VALUES(priority), catch_up = VALUES(catch_up), next_tick = VALUES(next_tick)`;

/** Params: queue, name. */
export const DELETE_SCHEDULE_SQL = 'DELETE FROM jobq_schedules WHERE queue = ? AND name = ?';

const COLUMNS = `name, cron, time_zone, kind, CAST(payload AS CHAR) AS payload, priority, catch_up,
         UNIX_TIMESTAMP(next_tick) AS next_tick, UNIX_TIMESTAMP(last_tick) AS last_tick`;

/** Every schedule of a queue, by name. Params: queue. */
export const LIST_SCHEDULES_SQL = `SELECT ${COLUMNS} FROM jobq_schedules WHERE queue = ? ORDER BY name`;

/** The server's clock, and the schedules that are due by it: a range of the (queue, next_tick) index. Params: queue. */
export const DUE_SCHEDULES_SQL = `
  SELECT ${COLUMNS}, UNIX_TIMESTAMP(NOW(6)) AS now
    FROM jobq_schedules FORCE INDEX (due)
   WHERE queue = ? AND next_tick <= NOW(6)`;

/** The server's clock, as Unix seconds. */
export const NOW_SQL = 'SELECT UNIX_TIMESTAMP(NOW(6)) AS now';

/**
 * Takes the ticks from `next_tick` up to a point: it changes a row only if nobody has taken them
 * yet (next_tick is still what this worker read), so of the workers that read the same due
 * schedule exactly one goes on to enqueue, in the same transaction. Params: new next tick,
 * last tick enqueued (Unix s), queue, name, the next tick as read (Unix s).
 */
export const TAKE_TICKS_SQL = `
  UPDATE jobq_schedules SET next_tick = FROM_UNIXTIME(?), last_tick = FROM_UNIXTIME(?)
   WHERE queue = ? AND name = ? AND next_tick = FROM_UNIXTIME(?)`;

/**
 * The next tick of a schedule whose ticks have ended (a cron with a year field, past its last
 * year): the last second a TIMESTAMP holds, so that the schedule is never due again and its row
 * stays for `schedule list` to show. No tick can lie there: ticks past it are refused.
 */
export const ENDED = 2147483647;
