import type mysql from 'mysql2/promise';

/** A statement and the values for its `?` placeholders. */
export type Statement = readonly [sql: string, values?: readonly unknown[]];

/**
 * A transaction whose statements travel in as few round trips as possible: START TRANSACTION
 * rides along with the first batch of statements and COMMIT with the last.
 */
export interface Transaction {
  /** Sends the statements in one round trip; returns one result per statement. */
  run(...statements: Statement[]): Promise<unknown[]>;
  /** Sends the statements followed by COMMIT in one round trip. */
  commitWith(...statements: Statement[]): Promise<unknown[]>;
  /** As commitWith, then `read` after the COMMIT, still in the same round trip; returns its rows too. */
  commitThenRead(statements: Statement[], read: Statement): Promise<{ results: unknown[]; read: unknown }>;
}

/** How a transaction opens, and what follows its COMMIT or ROLLBACK. */
export interface TransactionBounds {
  open: Statement;
  close: readonly Statement[];
}

export const START_TRANSACTION: TransactionBounds = { open: ['START TRANSACTION'], close: [] };

/**
 * Autocommit off from the transaction's first statement to its end: a statement that finds the
 * transaction gone starts another one, which the COMMIT or ROLLBACK ends, where after START
 * TRANSACTION it would commit on its own (database.ts, on Galera).
 */
export const AUTOCOMMIT_OFF: TransactionBounds = { open: ['SET autocommit = 0'], close: [['SET autocommit = 1']] };

/** A {@link Transaction} on one connection; {@link Database.transaction} makes one per attempt. */
export class PipelinedTransaction implements Transaction {
  private started = false;
  private ended = false;

  /** `settings`: session statements that ride ahead of the transaction's opening, in its first round trip. */
  constructor(
    private readonly connection: mysql.Connection,
    private readonly settings: readonly Statement[] = [],
    private readonly bounds: TransactionBounds = START_TRANSACTION,
  ) {}

  run(...statements: Statement[]): Promise<unknown[]> {
    return this.send(statements, false);
  }

  commitWith(...statements: Statement[]): Promise<unknown[]> {
    return this.send(statements, true);
  }

  async commitThenRead(statements: Statement[], read: Statement): Promise<{ results: unknown[]; read: unknown }> {
    const results = await this.send(statements, true, read);
    return { results: results.slice(0, -1), read: results.at(-1) };
  }

  /** Commits unless the work already did (or never sent anything). */
  async finish(): Promise<void> {
    if (this.started && !this.ended) await this.send([], true);
  }

  async rollback(): Promise<void> {
    if (this.started && !this.ended) await this.connection.query([['ROLLBACK'], ...this.bounds.close].map(([sql]) => sql).join(';\n')).catch(() => undefined);
    this.ended = true;
  }

  /** Sends the statements (and COMMIT, and a statement after it); returns the results of the statements and of the one after. */
  private async send(statements: Statement[], commit: boolean, afterCommit?: Statement): Promise<unknown[]> {
    if (this.ended) throw new Error('the transaction has ended');
    const opening: Statement[] = this.started ? [] : [...this.settings, this.bounds.open];
    const closing: Statement[] = commit ? [['COMMIT'], ...this.bounds.close] : [];
    const all = [...opening, ...statements, ...closing, ...(afterCommit === undefined ? [] : [afterCommit])];
    this.started = true;
    // Placeholders are positional over the joined text, so the values simply follow one another.
    const [results] = await this.connection.query(all.map(([sql]) => sql).join(';\n'), all.flatMap(([, values]) => values ?? []));
    if (commit) this.ended = true;
    const list = all.length === 1 ? [results] : (results as unknown[]);
    return [...list.slice(opening.length, opening.length + statements.length), ...(afterCommit === undefined ? [] : [list.at(-1)])];
  }
}

