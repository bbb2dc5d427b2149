import type { QuotedIdentifier } from '../../config/identifiers.js';
import type { JobStatus } from '../types.js';
/**
 * Finding jobs for the dashboard's search, a page at a time, on a table of any size: the ids of a
 * page come from one index (or one range of it per status), read in its own order and never
 * sorted, then the page's rows by primary key. What each search reads:
 * - an id: the primary key; a key: the job_key index (a job key, or a unique key behind a space);
 * - a status: its range of (status, waiting_priority, run_after), newest first;
 * - a kind, with a status, and a group: their range of (kind, kind_status, job_group,
 *   waiting_priority, kind_run_after); without a status, one such range per status, each read
 *   for at most a page and merged in the same order;
 * - nothing: the newest jobs, backwards along the primary key.
 * A group is searched only within a kind: the kind index holds it; nothing else does.
 */

export interface SearchRange {
  kind?: string;
  group?: string;
  status?: JobStatus;
}

/** Columns of a page's rows; times as Unix seconds, the error and payload cut short. */
const PAGE_COLUMNS = `j.id, j.kind, j.job_group, j.status, j.priority, j.attempts, UNIX_TIMESTAMP(j.created_at) AS created_at,
         UNIX_TIMESTAMP(j.run_after) AS run_after, LEFT(j.last_error, 200) AS last_error, LEFT(CAST(j.payload AS CHAR), 200) AS payload_preview`;

/** The page's rows, for ids chosen by `ids` (which names its order columns `o0`..`o2`, then `id`), in `order`. */
const rowsOf = (table: QuotedIdentifier, ids: string, order: string) => `
  SELECT ${PAGE_COLUMNS}
    FROM (${ids}) AS p JOIN ${table} AS j FORCE INDEX (PRIMARY) ON j.id = p.id
   ORDER BY ${order}`;

/** A job by id, or the jobs (two at most) holding a key as a job key or a unique key. Params: id; or key, key. */
export const JOB_BY_ID_SQL = (table: QuotedIdentifier) => `SELECT ${PAGE_COLUMNS} FROM ${table} AS j FORCE INDEX (PRIMARY) WHERE j.id = ?`;
export const JOBS_BY_KEY_SQL = (table: QuotedIdentifier) => `SELECT ${PAGE_COLUMNS} FROM ${table} AS j FORCE INDEX (job_key) WHERE j.job_key IN (?, CONCAT(' ', ?))`;

/** A page of the jobs in a range (see the head of this file), and its values: the range's, then limit and offset. */
export function jobsInRangeSql(table: QuotedIdentifier, range: SearchRange, statuses: readonly JobStatus[], limit: number, offset: number): readonly [string, unknown[]] {
  const page = [limit, offset];
  if (range.kind === undefined) {
    if (range.status === undefined) return [rowsOf(table, `SELECT id FROM ${table} FORCE INDEX (PRIMARY) ORDER BY id DESC LIMIT ? OFFSET ?`, 'j.id DESC'), page];
    const ids = `SELECT id, waiting_priority AS o1, run_after AS o2 FROM ${table} FORCE INDEX (status_priority_run_after)
                  WHERE status = ? ORDER BY waiting_priority DESC, run_after DESC, id DESC LIMIT ? OFFSET ?`;
    return [rowsOf(table, ids, 'p.o1 DESC, p.o2 DESC, p.id DESC'), [range.status, ...page]];
  }
  const grouped = range.group !== undefined;
  const order = grouped ? 'o1 DESC, o2 DESC, id DESC' : 'o0 DESC, o1 DESC, o2 DESC, id DESC';
  const branch = `(SELECT id, job_group AS o0, waiting_priority AS o1, kind_run_after AS o2
      FROM ${table} FORCE INDEX (kind_status_group_priority_run_after)
     WHERE kind = ? AND kind_status = ?${grouped ? ' AND job_group = ?' : ''}
     ORDER BY ${grouped ? '' : 'job_group DESC, '}waiting_priority DESC, kind_run_after DESC, id DESC LIMIT ?)`;
  const branchValues = (status: JobStatus) => [range.kind, status, ...(grouped ? [range.group] : []), limit + offset];
  const searched = range.status === undefined ? statuses : [range.status];
  const ids = `SELECT * FROM (${searched.map(() => branch).join(' UNION ALL ')}) AS b ORDER BY ${order} LIMIT ? OFFSET ?`;
  return [rowsOf(table, ids, order.replace(/\b(o\d|id)\b/g, 'p.$1')), [...searched.flatMap(branchValues), ...page]];
}

/**
 * Makes scheduled jobs due now ("run now"): their run time moved, and waiting, nothing else.
 * Params: [ids].
 */
export const RUN_NOW_SQL = (table: QuotedIdentifier) => `
  UPDATE ${table} FORCE INDEX (PRIMARY) SET run_after = NOW(6), status = 'unclaimed'
   WHERE id IN (?) AND status = 'scheduled'`;
