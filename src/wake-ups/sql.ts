import { createHash } from 'node:crypto';
import type { QuotedIdentifier } from '../config/identifiers.js';
import type { ServerVersion } from '../db/server-version.js';

/**
 * Wake-ups across processes. MySQL and MariaDB have no NOTIFY; what they have is KILL QUERY,
 * which ends another connection's statement at once (0.9 ms p50 on MariaDB 10.11 and MySQL 9.7,
 * measured from a second connection) and which a user may send to its own connections without
 * any privilege. An idle worker runs a SLEEP on a connection of its own; a producer that
 * committed due jobs finds that statement in the process list and ends it. A worker woken so
 * claims at once; a KILL QUERY that finds the connection between two waits ends nothing, and the
 * next wait answers at once for its jobs (waitStatement).
 */

/** The longest a worker's wait statement runs before the worker sends it again. */
const WAIT_SECONDS = 60;

/** A queue's wait statement (waitStatement). */
export interface WaitStatement {
  /** The statement the worker sleeps in, the same text for every worker of the queue: producers find the waiters by it. */
  readonly sleeping: string;
  /** What the worker sends. Params: the newest job id it was told of. */
  readonly sql: string;
}

/**
 * The statement a worker waits in. It answers at once with the newest job id when jobs newer than
 * the worker was told of are in the table: a ring that reached the connection between two waits
 * ends nothing, and without this its job waited for a later turn (at 200 jobs a second from two
 * producers, p50 7.2-9.3 ms in the runs that lost rings against 5.0-5.8 in those that did not,
 * bench-results/latency-regimes-by-hand.json; with this wait, the tails at 200/s shorter in
 * bench-results/wait-answers-for-newer-ab.json). The newest id is read by a statement of its
 * own, and MAX over the primary key from the index's end: a statement that read the table would
 * hold its metadata lock while it slept, and an ALTER TABLE would wait for it, with every
 * statement on the table behind. The database and table are hashed into the column name, for any
 * name to go in with nothing to quote.
 */
export function waitStatement(database: string, table: { name: string; qualified: QuotedIdentifier }): WaitStatement {
  const queue = createHash('sha256').update(`${database}\0${table.name}`).digest('hex').slice(0, 16);
  const sleeping = `SELECT @jobq_newest AS newest, SLEEP(${WAIT_SECONDS} * (@jobq_newest IS NULL)) AS jobq_wake_up_${queue}`;
  return { sleeping, sql: `SET @jobq_newest = (SELECT MAX(id) FROM ${table.qualified} WHERE id > ?); ${sleeping}` };
}

/**
 * The connections of the server in the process list that the user may see: without the PROCESS
 * privilege, its own, which are those it may KILL. MySQL 8.0.22+ deprecates the
 * information_schema table (a warning with every read) for performance_schema's; MariaDB has
 * only the former.
 */
const processList = (version: ServerVersion) => (version.flavor === 'MySQL' ? 'performance_schema.processlist' : 'information_schema.PROCESSLIST');

/**
 * The queue's waiters, and whether the workers known to wait still do: their connection ids, and
 * whether each is in the wait statement now (a known waiter may be between two waits). A gone
 * connection has no row. Params: wait statement, wait statement, [known ids, or 0].
 */
export const waitersSql = (version: ServerVersion) => `SELECT ID AS id, INFO = ? AS waiting FROM ${processList(version)} WHERE INFO = ? OR ID IN (?)`;

/** Ends the connection's statement, if it runs one. Params: connection id. */
export const WAKE_SQL = 'KILL QUERY ?';

/**
 * The wait connection's session: its own id (to end its wait on a stop) and no time limit on its
 * statements: a server's max_execution_time (MySQL) or max_statement_time (MariaDB) would end the
 * wait early, over and over if it were short.
 */
export const waitSessionSql = (version: ServerVersion) =>
  `SET SESSION ${version.flavor === 'MySQL' ? 'max_execution_time' : 'max_statement_time'} = 0; SELECT CONNECTION_ID() AS id`;

/** Ends a wait connection whose worker stopped, whatever it is doing. Params: connection id. */
export const END_WAIT_CONNECTION_SQL = 'KILL CONNECTION ?';
