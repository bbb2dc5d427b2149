import type { Database } from '../db/database.js';
import type { QuotedIdentifier } from '../config/identifiers.js';
import { CANCEL_REQUESTED_SQL } from '../queue/sql/cancel.js';

/** How often a worker looks whether jobs it runs were marked for cancelling: the cancel's delay is at most this and a round trip. */
export const CANCEL_CHECK_MS = 500;

/**
 * Looks every CANCEL_CHECK_MS, while the worker runs jobs, which of them `cancel` marked (one read
 * by primary key, on the worker's upkeep connection, between its transactions: inside a fold's,
 * a Galera node's abort of that transaction surfaced in this read and the fold's later
 * statements ran outside it), and hands their ids to `onCancel`. A read that fails is tried again
 * next time: a cancel waits, nothing else does. Stops with `signal`.
 */
export function watchCancels(db: Database, table: QuotedIdentifier, runningIds: () => number[], onCancel: (ids: number[]) => void, signal: AbortSignal): void {
  let reading = false;
  const timer = setInterval(() => {
    const ids = runningIds();
    if (reading || ids.length === 0) return;
    reading = true;
    db.queryOutsideTransactions<Array<{ id: number }>>(CANCEL_REQUESTED_SQL(table), [ids])
      .then((rows) => rows.length > 0 && !signal.aborted && onCancel(rows.map((row) => Number(row.id))))
      .catch(() => undefined)
      .finally(() => (reading = false));
  }, CANCEL_CHECK_MS);
  timer.unref();
  signal.addEventListener('abort', () => clearInterval(timer), { once: true });
}
