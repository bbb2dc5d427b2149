/**
 * The kept counts of the queue `jobs` in `database` (jobq_counters, and the new jobs not yet
 * folded in), summed over its kinds; `read` runs one statement and answers its rows.
 */
export async function keptTotals(read: (sql: string) => Promise<unknown[]>, database: string): Promise<{ waiting: number; done: number; failed: number }> {
  const [row] = (await read(`
    SELECT (SELECT IFNULL(SUM(waiting_jobs), 0) FROM \`${database}\`.jobq_counters WHERE queue = 'jobs')
             + (SELECT IFNULL(SUM(jobs), 0) FROM \`${database}\`.jobq_new_jobs WHERE queue = 'jobs') AS waiting,
           (SELECT IFNULL(SUM(done_jobs), 0) FROM \`${database}\`.jobq_counters WHERE queue = 'jobs') AS done,
           (SELECT IFNULL(SUM(failed_jobs), 0) FROM \`${database}\`.jobq_counters WHERE queue = 'jobs') AS failed`)) as [Record<string, string>];
  return { waiting: Number(row.waiting), done: Number(row.done), failed: Number(row.failed) };
}
