import type { QuotedIdentifier } from '../config/identifiers.js';
import type { Database } from '../db/database.js';
import { KeptDeltas } from '../claim/kept-counts.js';
import * as countersSql from '../claim/sql/counters.js';
import type { Statement } from '../db/transaction.js';
import * as newJobsSql from './sql/new-jobs.js';
import * as uncountedSql from './sql/uncounted-jobs.js';

const KEPT_COLUMNS = { unclaimed: 'waiting_jobs', done: 'done_jobs', failed: 'failed_jobs', cancelled: 'cancelled_jobs' } as const;

/**
 * Sets the queue's kept counts of waiting, done, failed and cancelled jobs (claim/sql/counters.ts) from the
 * table, in place of its new-job rows (sql/new-jobs.ts), and lists every kind it holds there:
 * after a migration (setup-tables) and after rows were changed by hand. While it counts,
 * every transaction that would change a count waits at its counter row or at the end of the
 * new-job rows (the recount has locked them all, and the gaps for new ones: REPEATABLE READ, for
 * this transaction only; jobq's sessions otherwise read committed). Its snapshot, taken after the
 * locks, therefore holds every change whose count it replaces, and the changes that wait add
 * theirs after it. The new-job rows are locked first, as a fold locks them before its counter
 * row. Waiting jobs not counted yet (sql/uncounted-jobs.ts) are left to a fold. Made first: the
 * queue's fold mark, at the highest id (no job before it is uncounted, on a table made or
 * migrated just now). Costs a read of the waiting jobs' rows, and of the done and failed jobs'
 * index entries and of the kind index.
 */
export async function recountKeptCounts(db: Database, table: { name: string; quoted: QuotedIdentifier }): Promise<void> {
  await db.query(uncountedSql.ADD_FOLD_MARK_SQL(table.quoted), [table.name]);
  await db.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
  try {
    await db.transaction(async (tx) => {
      const [, , , counted, kinds] = (await tx.run(
        [newJobsSql.LOCK_ALL_NEW_JOBS_SQL, [table.name]],
        [countersSql.LOCK_QUEUE_COUNTERS_SQL, [table.name]],
        [countersSql.ZERO_KEPT_COUNTS_SQL, [table.name]],
        [countersSql.COUNT_KEPT_SQL(table.quoted)],
        [countersSql.KINDS_IN_TABLE_SQL(table.quoted)],
      )) as [unknown, unknown, unknown, Array<{ kind: string | null; status: keyof typeof KEPT_COLUMNS; count: number }>, Array<{ kind: string }>];
      const counts = new KeptDeltas();
      for (const { kind, status, count } of counted) {
        const column = KEPT_COLUMNS[status];
        // The rows of no kind are those of the totals (kind NULL) less those of every kind.
        counts.add(null, column, kind === null ? Number(count) : -Number(count));
        if (kind !== null) counts.add(kind, column, Number(count));
      }
      // Kinds with jobs in the table that enqueue did not list (jobs of an older jobq, or put in by hand) are listed now.
      const listed: Statement[] = kinds.length === 0 ? [] : [[countersSql.listKindsSql(kinds.length), kinds.flatMap((row) => [table.name, row.kind])]];
      await tx.commitWith([newJobsSql.FORGET_NEW_JOBS_SQL, [table.name]], ...counts.statements({ queue: table.name, shard: countersSql.RECOUNT_SHARD }), ...listed);
    });
  } finally {
    await db.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
  }
}
