import type { QuotedIdentifier } from '../config/identifiers.js';
import type { Database } from '../db/database.js';
import { readGaleraNode } from '../db/galera.js';
import { isWriteRefused } from '../db/server-errors.js';
import * as countersSql from '../claim/sql/counters.js';
import type { Schedule } from './schedules.js';
import * as statsSql from './sql/stats.js';
import { foldNewJobs } from './new-job-count.js';
import { foldUncountedJobs } from './uncounted-jobs.js';
import { EVERY_KIND } from './limits.js';
import { readTableLayout } from './table-layout.js';
import { JOB_STATUSES, type JobStatus, type KindLimitStatus, type QueueStats, type QueueTotals, type ServerInfo } from './types.js';

const noTotals = () => ({ completed: 0, failed: 0, retried: 0 });

/** Counts per status and per kind (zeros included), paused kinds, the longest wait and claimed jobs per owner. */
export async function readQueueStats(db: Database, table: { name: string; quoted: QuotedIdentifier }, seen: { pausedKinds: string[]; schedules: Schedule[]; limits: KindLimitStatus[] }): Promise<QueueStats> {
  const zero = () => Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
  const counted = await countJobs(db, table);
  const { pausedKinds, schedules, limits } = seen;
  const totalRows = await db.query<Array<{ kind: string; completed: string; failed: string; retried: string; claims: string; empty_claims: string }>>(
    countersSql.TOTALS_BY_KIND_SQL,
    [table.name],
  );
  const totals = new Map(
    totalRows
      .filter((row) => Number(row.completed) + Number(row.failed) + Number(row.retried) > 0)
      .map((row) => [row.kind, { completed: Number(row.completed), failed: Number(row.failed), retried: Number(row.retried) }]),
  );
  const claims = totalRows.reduce((sum, row) => ({ total: sum.total + Number(row.claims), empty: sum.empty + Number(row.empty_claims) }), { total: 0, empty: 0 });
  const nextTicks = new Map<string, Date>();
  for (const { job, nextTick, problem } of schedules) {
    const earliest = nextTicks.get(job.kind);
    if (nextTick !== null && problem === null && (earliest === undefined || nextTick < earliest)) nextTicks.set(job.kind, nextTick);
  }
  const counts = zero();
  const withoutKind = { counts: zero() };
  const known = [...pausedKinds, ...limits.flatMap((limit) => (limit.kind === EVERY_KIND ? [] : [limit.kind])), ...nextTicks.keys(), ...[...totals.keys()].filter((kind) => kind !== '')];
  const byKind = new Map<string, { counts: Record<JobStatus, number> }>(known.map((kind) => [kind, { counts: zero() }]));
  const entryOf = (kind: string) => {
    if (!byKind.has(kind)) byKind.set(kind, { counts: zero() });
    return byKind.get(kind)!;
  };
  for (const row of counted) {
    const count = Number(row.count);
    if (count === 0 || row.scope === 'newRows') continue;
    // Claimed jobs: counted over all jobs, and of each kind (those without one are the difference).
    if (row.scope === 'all') {
      counts.claimed += count;
      withoutKind.counts.claimed += count;
    } else if (row.scope === 'kind') {
      entryOf(row.kind!).counts.claimed += count;
      withoutKind.counts.claimed -= count;
    } else {
      // The others per kind, '' or NULL for none.
      const entry = row.kind === null || row.kind === '' ? withoutKind : entryOf(row.kind);
      // Scheduled jobs are in the kept count of waiting jobs too: counted apart, they leave it.
      if (row.scope === 'scheduled') {
        for (const counted of [counts, entry.counts]) {
          counted.scheduled += count;
          counted.unclaimed -= count;
        }
      } else {
        counts[row.status] += count;
        entry.counts[row.status] += count;
      }
    }
  }
  const paused = new Set(pausedKinds);
  const limitOf = (kind: string, entry: { counts: Record<JobStatus, number> }): QueueStats['everyKindLimit'] => {
    const limit = limits.find((candidate) => candidate.kind === kind);
    if (limit === undefined) return null;
    const room = limit.concurrency === null ? Infinity : Math.max(0, limit.concurrency - limit.running);
    const { concurrency, groupConcurrency, rate, groupRate, running } = limit;
    return { concurrency, groupConcurrency, rate, groupRate, running, heldBack: Math.max(0, entry.counts.unclaimed - room) };
  };
  const kinds: QueueStats['byKind'] = [...byKind]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([kind, entry]) => ({ kind, ...entry, paused: paused.has(kind), limit: limitOf(kind, entry), nextScheduledAt: nextTicks.get(kind) ?? null, totals: totals.get(kind) ?? noTotals() }));
  if (Object.values(withoutKind.counts).some((n) => n > 0) || totals.has('')) {
    kinds.unshift({ kind: null, ...withoutKind, paused: false, limit: null, nextScheduledAt: null, totals: totals.get('') ?? noTotals() });
  }
  const [head] = await db.query<Array<{ age_us: number | null; max_id: number | null }>>(statsSql.HEAD_AGE_AND_MAX_ID_SQL(table.quoted));
  const owners = await db.query<Array<{ owner_id: number; count: number; expired: number; lease_left_us: number }>>(statsSql.CLAIMED_BY_OWNER_SQL(table.quoted));
  return {
    table: table.name,
    counts,
    total: Object.values(counts).reduce((sum, n) => sum + n, 0),
    byKind: kinds,
    everyKindLimit: limitOf(EVERY_KIND, { counts }),
    headAgeSeconds: head?.age_us === null || head?.age_us === undefined ? null : Math.max(0, Number(head.age_us)) / 1e6,
    claimedByOwner: owners.map((row) => ({
      ownerId: row.owner_id === 0 ? null : row.owner_id,
      count: Number(row.count),
      expired: Number(row.expired),
      leaseLeftSeconds: Number(row.lease_left_us) / 1e6,
    })),
    maxId: Number(head?.max_id ?? 0),
    pausedKinds,
    skippedSchedules: schedules.filter((s) => s.problem !== null).map((s) => ({ name: s.name, reason: s.problem! })),
    claims,
    layout: await readTableLayout(db, db.settings.database, table.name),
  };
}

type CountRow = { scope: 'all' | 'kind' | 'scheduled' | 'kept' | 'new' | 'newRows' | 'uncounted'; kind: string | null; status: JobStatus; count: number | string };

/**
 * Above this many rows of new jobs, or jobs inserted after the fold mark, stats() folds them into
 * the kept counts before it counts (where nothing else does: no worker runs).
 */
const FOLD_NEW_JOBS_ABOVE = 1000;
const FOLD_UNCOUNTED_ABOVE = 5000;

/**
 * The counts of COUNT_JOBS_SQL, for the kinds read before it, read again in the same round trip:
 * enqueue lists a kind before its jobs go in, so when the list read after holds nothing new, every
 * kind in the count's snapshot was counted; otherwise (a new kind just then) again. The fold mark comes with the
 * lists, and many new jobs (rows of them, or jobs after the mark) are folded first.
 */
async function countJobs(db: Database, table: { name: string; quoted: QuotedIdentifier }): Promise<CountRow[]> {
  const listsSql = `${statsSql.LISTED_KINDS_SQL};\n${statsSql.FOLD_MARK_AND_MAX_ID_SQL(table.quoted)}`;
  type Lists = [Array<{ kind: string }>, Array<{ mark: number; max_id: number }>];
  const listed = ([kinds, [mark]]: Lists) => ({
    kinds: kinds.map((row) => row.kind),
    mark: Number(mark?.mark ?? 0),
    afterMark: Number(mark?.max_id ?? 0) - Number(mark?.mark ?? 0),
  });
  let lists = listed(await db.query<Lists>(listsSql, [table.name, table.name]));
  for (let folded = false; ; ) {
    const { kinds, mark, afterMark } = lists;
    const [rows, ...again] = await db.query<[CountRow[], ...Lists]>(`${statsSql.COUNT_JOBS_SQL(table.quoted, kinds.length > 0)};\n${listsSql}`, [
      ...(kinds.length > 0 ? [kinds] : []),
      ...Array(6).fill(table.name),
      mark,
      table.name,
      table.name,
    ]);
    const now = listed(again);
    const within = <T>(some: readonly T[], all: readonly T[]) => some.every((item) => all.includes(item));
    lists = now;
    if (!within(now.kinds, kinds)) continue;
    if (folded || (Number(rows.find((row) => row.scope === 'newRows')?.count ?? 0) <= FOLD_NEW_JOBS_ABOVE && afterMark <= FOLD_UNCOUNTED_ABOVE)) return rows;
    // A reader without the right to write (or a read-only server) counts them as they are.
    await foldNewJobs(db, table.name)
      .then(() => foldUncountedJobs(db, table))
      .catch((error: unknown) => {
        if (!isWriteRefused(error)) throw error;
      });
    lists = listed(await db.query<Lists>(listsSql, [table.name, table.name]));
    folded = true;
  }
}

/** The running totals of every kind together and the highest id handed out: two small reads, whatever the table holds. */
export async function readQueueTotals(db: Database, table: { name: string; quoted: QuotedIdentifier }): Promise<QueueTotals> {
  const rows = await db.query<Array<{ completed: string; failed: string; retried: string }>>(countersSql.TOTALS_BY_KIND_SQL, [table.name]);
  const [last] = await db.query<Array<{ max_id: number | null }>>(statsSql.MAX_ID_SQL(table.quoted));
  const sum = (column: 'completed' | 'failed' | 'retried') => rows.reduce((total, row) => total + Number(row[column]), 0);
  return { completed: sum('completed'), failed: sum('failed'), retried: sum('retried'), maxId: Number(last?.max_id ?? 0) };
}

/** Per kind (jobs with a kind), the seconds the longest-waiting due job has waited since it came due. */
export async function readOldestWaitingByKind(db: Database, table: QuotedIdentifier): Promise<Map<string, number>> {
  const rows = await db.query<Array<{ kind: string; age_us: number }>>(statsSql.OLDEST_WAITING_BY_KIND_SQL(table));
  return new Map(rows.map((row) => [row.kind, Math.max(0, Number(row.age_us)) / 1e6]));
}

/** The server's version, default isolation level and binary log format. */
export async function readServerInfo(db: Database): Promise<ServerInfo> {
  let rows: Array<{ version: string; isolation: string; binlog_format: string; log_bin: number }>;
  try {
    rows = await db.query(statsSql.SERVER_INFO_SQL('transaction_isolation'));
  } catch (error) {
    if ((error as { errno?: number }).errno !== 1193) throw error; // unknown variable: MariaDB before 11.1
    rows = await db.query(statsSql.SERVER_INFO_SQL('tx_isolation'));
  }
  const info = rows[0]!;
  const galera = await readGaleraNode((sql) => db.query(sql));
  return {
    version: info.version,
    isolationLevel: info.isolation,
    binlogFormat: info.binlog_format,
    binlogEnabled: Number(info.log_bin) === 1,
    ...(galera !== undefined && { galera }),
  };
}
