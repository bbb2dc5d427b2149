import { parseDatabaseUrl } from '../config/database-url.js';
import { quoteIdentifier, type QuotedIdentifier } from '../config/identifiers.js';
import { type ConnectionEvent } from '../db/connection-events.js';
import { Database, type DatabaseCounters } from '../db/database.js';
import { ReplicaCandidates } from '../db/replica.js';
import { ClaimLoop, type ClaimLoopSettings, type JobSink } from '../claim/loop.js';
import type { TurnGate } from '../claim/turn-gate.js';
import type { SettleResult } from '../claim/turn-request.js';
import type { Claim } from '../claim/types.js';
import { insertTarget, JobInserts } from '../queue/enqueue.js';
import type { JobRow } from '../queue/new-jobs.js';
import { readTableLayout } from '../queue/table-layout.js';
import type { ChildConnection } from '../processes/messages.js';

/**
 * The jobs table as the article's generators and consumers use it: on a connection of their own
 * that rides out outages, with the core's inserts and claim loop. The supervisor has checked the
 * table before starting them.
 */
export class ArticleTable {
  private readonly quoted: QuotedIdentifier;
  private readonly inserts: JobInserts;
  private replica: ReplicaCandidates | undefined;

  private constructor(
    private readonly db: Database,
    private readonly connection: ChildConnection,
    private readonly partitions: number,
    private readonly onEvent: (event: ConnectionEvent) => void,
  ) {
    this.quoted = quoteIdentifier(connection.table);
    this.inserts = new JobInserts(db, insertTarget(db.settings.database, connection.table), (work) => work(), async () => partitions > 0);
  }

  static async open(connection: ChildConnection, onEvent: (event: ConnectionEvent) => void): Promise<ArticleTable> {
    const db = await Database.open({ settings: parseDatabaseUrl(connection.url), reconnect: true, waitForServer: true, onConnectionEvent: onEvent });
    const { partitions } = await readTableLayout(db, db.settings.database, connection.table);
    return new ArticleTable(db, connection, partitions, onEvent);
  }

  get counters(): Readonly<DatabaseCounters> {
    return this.db.counters;
  }

  /** Inserts the rows as they are, in multi-row INSERTs, by the table's layout. */
  async insert(rows: JobRow[]): Promise<void> {
    await this.inserts.many(rows, { idRange: false }, false);
  }

  /** A claim loop on this connection, reading candidates from the replica when there is one. */
  claimLoop(settings: Omit<ClaimLoopSettings, 'queue' | 'partitions' | 'candidateSource'>, gate: TurnGate, sink: JobSink, onTurn: (result: SettleResult & { claim?: Claim }) => void): ClaimLoop {
    const { replica } = this.connection;
    if (replica !== undefined) this.replica = new ReplicaCandidates({ settings: parseDatabaseUrl(replica.url, 'replica URL'), maxLagSeconds: replica.maxLagSeconds, onEvent: this.onEvent });
    const full = { ...settings, queue: this.connection.table, partitions: this.partitions, ...(this.replica !== undefined && { candidateSource: this.replica }) };
    return new ClaimLoop(this.db, this.quoted, full, gate, sink, onTurn);
  }

  async close(): Promise<void> {
    await this.replica?.close();
    await this.db.close();
  }
}
