import type { ConnectionSettings } from '../config/database-url.js';
import { type ReplicaEvent } from './connection-events.js';
import { Database } from './database.js';
import { type Statement } from './transaction.js';

/**
 * Where a claim reads its candidates when not on the primary, in its own transaction: a replica.
 * The article: "This query can run outside our transaction and could use a replica to find a set
 * of candidate primary keys." A stale candidate costs nothing but an empty claim, because the
 * locking read on the primary checks every row again.
 */
export interface CandidateSource {
  /** The rows of a candidate query; undefined when the source cannot be used now (read on the primary then). */
  read<T>(statement: Statement): Promise<T[] | undefined>;
  close(): Promise<void>;
}

export interface ReplicaOptions {
  settings: ConnectionSettings;
  /** A replica further behind than this is bypassed (default 1 s). */
  maxLagSeconds: number;
  onEvent?: (event: ReplicaEvent) => void;
}

/** How often the replica's lag is read, in the background of the claims. */
const CHECK_EVERY_MS = 1000;
/** A candidate read that takes longer than this gives the replica up until its next check: no claim waits on a hung replica. */
const READ_TIMEOUT_MS = 1000;

/**
 * Candidates from a replica, used only while it answers and its lag, as the replica itself reports
 * it (Seconds_Behind_Master, whole seconds; a Group Replication secondary, by its applier queue),
 * is within the bound. Until the first check has passed, and whenever one fails, the claims read
 * on the primary: a broken replica slows nothing.
 */
export class ReplicaCandidates implements CandidateSource {
  private db: Database | undefined;
  private state: 'unchecked' | 'used' | 'bypassed' = 'unchecked';
  private checkedAt = -Infinity;
  private checking: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: ReplicaOptions) {
    this.checkSoon();
  }

  async read<T>(statement: Statement): Promise<T[] | undefined> {
    this.checkSoon();
    const db = this.db;
    if (this.state !== 'used' || db === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS);
      });
      return await Promise.race([db.query<T[]>(statement[0], [...(statement[1] ?? [])]), timeout]);
    } catch (error) {
      this.giveUp(`is down (${(error as Error).message})`);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.checking;
    this.db?.destroy();
  }

  private checkSoon(): void {
    if (this.closed || this.checking !== undefined || performance.now() - this.checkedAt < CHECK_EVERY_MS) return;
    this.checking = this.check().finally(() => {
      this.checkedAt = performance.now();
      this.checking = undefined;
    });
  }

  private async check(): Promise<void> {
    try {
      this.db ??= await Database.open({ settings: this.options.settings, readsOnly: true });
      const lag = await replicaLagSeconds(this.db);
      if (lag === undefined) this.set(false, 'is not replicating');
      else if (lag > this.options.maxLagSeconds) this.set(false, `lags ${lag} s behind the primary (more than ${this.options.maxLagSeconds} s)`);
      else this.set(true, `lags ${lag} s`);
    } catch (error) {
      this.giveUp(`is down (${(error as Error).message})`);
    }
  }

  private giveUp(reason: string): void {
    this.db?.destroy();
    this.db = undefined;
    this.set(false, reason);
  }

  /** Uses the replica or not from now on; says so in one line when that changes (not when it is fine from the start). */
  private set(usable: boolean, reason: string): void {
    const previous = this.state;
    this.state = usable ? 'used' : 'bypassed';
    if (this.state === previous || (previous === 'unchecked' && usable)) return;
    const where = `${this.options.settings.servers[0]!.host}:${this.options.settings.servers[0]!.port}`;
    this.options.onEvent?.(
      usable
        ? { state: 'replica-used', detail: `candidates from the replica at ${where} again; it ${reason}` }
        : { state: 'replica-bypassed', detail: `candidates from the primary: the replica at ${where} ${reason}` },
    );
  }
}

/**
 * The replica's lag in seconds, or undefined when it is no replica or its SQL thread is stopped.
 * SHOW REPLICA STATUS is MariaDB 10.5.1+ and MySQL 8.0.22+ (which calls the column
 * Seconds_Behind_Source); older servers know only SHOW SLAVE STATUS. A Group Replication secondary
 * has no such replica status: its lag is read from the group's tables instead.
 */
async function replicaLagSeconds(db: Database): Promise<number | undefined> {
  let rows: Array<Record<string, unknown>>;
  try {
    rows = await db.query('SHOW REPLICA STATUS');
  } catch (error) {
    if ((error as { errno?: number }).errno !== 1064) throw error;
    rows = await db.query('SHOW SLAVE STATUS');
  }
  if (rows.length === 0) return groupMemberLagSeconds(db);
  const lag = rows[0]?.Seconds_Behind_Master ?? rows[0]?.Seconds_Behind_Source;
  return lag === null || lag === undefined ? undefined : Number(lag);
}

/**
 * This Group Replication member's state, the transactions it has yet to apply, and how long ago the
 * oldest one it is applying was committed on its origin. (Session time zone on both sides.)
 */
const GROUP_MEMBER_LAG_SQL = `
  SELECT m.MEMBER_STATE AS state, s.COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE AS queued,
         (SELECT MAX(TIMESTAMPDIFF(SECOND, w.APPLYING_TRANSACTION_ORIGINAL_COMMIT_TIMESTAMP, NOW(6)))
            FROM performance_schema.replication_applier_status_by_worker w
           WHERE w.CHANNEL_NAME = 'group_replication_applier' AND w.APPLYING_TRANSACTION <> '') AS applying
    FROM performance_schema.replication_group_members m
    JOIN performance_schema.replication_group_member_stats s ON s.MEMBER_ID = m.MEMBER_ID
   WHERE m.MEMBER_ID = @@server_uuid`;

/** An ONLINE member's lag: none with nothing left to apply; undefined on a server in no group. */
async function groupMemberLagSeconds(db: Database): Promise<number | undefined> {
  let rows: Array<{ state: string; queued: number; applying: number | null }>;
  try {
    rows = await db.query(GROUP_MEMBER_LAG_SQL);
  } catch (error) {
    // MariaDB has no such tables (1146), nor a MySQL whose performance schema is off (1142 or 1146).
    if ([1146, 1142].includes((error as { errno?: number }).errno ?? 0)) return undefined;
    throw error;
  }
  const member = rows[0];
  if (member?.state !== 'ONLINE') return undefined;
  return Number(member.queued) === 0 ? 0 : Number(member.applying ?? 0);
}
