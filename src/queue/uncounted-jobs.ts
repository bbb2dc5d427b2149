import type { QuotedIdentifier } from '../config/identifiers.js';
import type { Database } from '../db/database.js';
import { counterShard, KeptDeltas } from '../claim/kept-counts.js';
import * as sql from './sql/uncounted-jobs.js';
import { MAX_ID_SQL } from './sql/stats.js';
import type { Statement } from '../db/transaction.js';

/**
 * Inserts of at most this many jobs on the queue's own connection go in uncounted; larger ones
 * count their jobs in their own transaction, which costs a thousand-row insert a few per cent.
 */
export const UNCOUNTED_UP_TO = 100;

/** Jobs a fold reads past the mark per transaction. */
const FOLD_CHUNK = 5000;

/**
 * Counts the queue's waiting uncounted jobs whose insert began more than a second ago into its
 * kept counts and moves its mark past them, a chunk per transaction; nothing when another fold
 * (or a recount) holds the mark. Jobs a claim holds are left to it. Where no writer of uncounted
 * jobs has held a lease since the mark last moved, the mark goes to the highest id unread.
 */
export async function foldUncountedJobs(db: Database, table: { name: string; quoted: QuotedIdentifier }): Promise<void> {
  for (;;) {
    const read = await db.transaction(async (tx) => {
      const [marks, [last], writing] = (await tx.run([sql.LOCK_FOLD_MARK_SQL, [table.name]], [MAX_ID_SQL(table.quoted)], [sql.WRITER_SINCE_MARK_SQL, [table.name]])) as [
        Array<{ last_id: number }>,
        Array<{ max_id: number | null }>,
        unknown[],
      ];
      if (marks.length === 0) return 0;
      if (writing.length === 0) {
        // The highest id is read before the leases: a writer that took one since inserts after it.
        await tx.commitWith([sql.SET_FOLD_MARK_SQL, [Math.max(Number(last?.max_id ?? 0), Number(marks[0]!.last_id)), 1, table.name]], [sql.FORGET_WRITERS_SQL, [table.name]]);
        return 0;
      }
      const [jobs] = (await tx.run([sql.JOBS_AFTER_MARK_SQL(table.quoted), [Number(marks[0]!.last_id), FOLD_CHUNK]])) as [Array<{ id: number; kind: string | null; uncounted: number; settled: number }>];
      const unsettled = jobs.findIndex((job) => Number(job.settled) !== 1);
      const settled = unsettled < 0 ? jobs : jobs.slice(0, unsettled);
      const uncounted = settled.filter((job) => Number(job.uncounted) === 1).map((job) => Number(job.id));
      const [locked] = uncounted.length === 0 ? [[]] : ((await tx.run([sql.LOCK_UNCOUNTED_SQL(table.quoted), [uncounted]])) as [Array<{ id: number; kind: string | null }>]);
      // The mark stops before a job another transaction held: a claim may hand it back unclaimed
      // (it locks more candidates than a limit lets it take), and the next fold counts it then.
      const lockedIds = new Set(locked.map((job) => Number(job.id)));
      const held = uncounted.find((id) => !lockedIds.has(id));
      const passed = held === undefined ? settled : settled.filter((job) => Number(job.id) < held);
      const counted = new KeptDeltas();
      for (const job of locked) counted.add(job.kind, 'waiting_jobs', 1);
      await tx.commitWith(
        ...(locked.length === 0 ? [] : [[sql.MARK_COUNTED_SQL(table.quoted), [locked.map((job) => Number(job.id))]] as Statement]),
        ...counted.statements({ queue: table.name, shard: counterShard(undefined) }),
        [sql.SET_FOLD_MARK_SQL, [passed.length === 0 ? Number(marks[0]!.last_id) : Number(passed.at(-1)!.id), passed.length === jobs.length && jobs.length < FOLD_CHUNK ? 1 : 0, table.name]],
      );
      return passed.length;
    });
    if (read < FOLD_CHUNK) return;
  }
}
