import type { Database } from '../../src/db/database.js';

/**
 * What `during` returns, and the index entries and rows the session of `db` read meanwhile, by its
 * handler counters, less those a read of the counters itself costs (MySQL reads its status tables).
 * The counters are the session's own: other files' statements do not move them (server-counters.ts
 * holds the server-wide ones).
 */
export async function entriesReadBy<T>(db: Database, during: () => Promise<T>): Promise<{ result: T; read: number }> {
  const reads = async () => (await db.query<Array<{ Value: string }>>("SHOW SESSION STATUS LIKE 'Handler_read%'")).reduce((sum, row) => sum + Number(row.Value), 0);
  const first = await reads();
  const before = await reads();
  const result = await during();
  return { result, read: (await reads()) - before - (before - first) };
}
