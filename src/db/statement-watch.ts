import type { Database } from './database.js';

// How far a long statement (an ALTER TABLE that copies the table, say) has got, read from a second
// connection while it runs. MariaDB reports it for every connection in
// information_schema.PROCESSLIST. MySQL reports it in performance_schema's current stage, and only
// when the stage instruments and the events_stages_current consumer are on, which by default they
// are not (docs/operations.md says how to turn them on); without them, only the time is known.

const MARIADB_PROGRESS_SQL = 'SELECT PROGRESS / 100 AS fraction FROM information_schema.PROCESSLIST WHERE ID = ? AND MAX_STAGE > 0';
const MYSQL_PROGRESS_SQL = `
  SELECT s.WORK_COMPLETED / s.WORK_ESTIMATED AS fraction
    FROM performance_schema.events_stages_current AS s
    JOIN performance_schema.threads AS t ON t.THREAD_ID = s.THREAD_ID
   WHERE t.PROCESSLIST_ID = ? AND s.WORK_ESTIMATED > 0`;

const POLL_MS = 250;

/** A second connection to the server of `db`, for watching the statements that `db` runs. */
export class StatementWatch {
  private constructor(
    private readonly db: Database,
    private readonly watcher: Database,
    private readonly connectionId: number,
  ) {}

  static async open(db: Database): Promise<StatementWatch> {
    const [row] = await db.query<Array<{ id: number }>>('SELECT CONNECTION_ID() AS id');
    return new StatementWatch(db, await db.openAnother(), Number(row!.id));
  }

  /**
   * Runs `statement` on the watched connection, telling `onProgress` every POLL_MS the fraction of
   * it done (0 to 1) as the server reports it, or undefined where the server does not.
   */
  async run<T>(statement: () => Promise<T>, onProgress: (fraction: number | undefined) => void): Promise<T> {
    const sql = this.db.serverVersion.flavor === 'MariaDB' ? MARIADB_PROGRESS_SQL : MYSQL_PROGRESS_SQL;
    let polling = false;
    const timer = setInterval(() => {
      if (polling) return;
      polling = true;
      this.watcher
        .query<Array<{ fraction: number | string | null }>>(sql, [this.connectionId])
        .then(
          ([row]) => onProgress(row?.fraction === null || row?.fraction === undefined ? undefined : Math.min(1, Number(row.fraction))),
          () => onProgress(undefined), // performance_schema off, or no privilege to read it
        )
        .finally(() => (polling = false));
    }, POLL_MS);
    try {
      return await statement();
    } finally {
      clearInterval(timer);
    }
  }

  async close(): Promise<void> {
    await this.watcher.close();
  }
}
