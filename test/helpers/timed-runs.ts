import { fileURLToPath } from 'node:url';
import { startCli, type CliRun } from './run-cli.js';
import type { TestDatabase } from './test-database.js';

/**
 * A run of test/fixtures/timed-runs-handler.mjs as its `runs` table holds it: the job, its kind and
 * group, the process, and its claim, start and end by the server's clock (strings that sort as
 * times).
 */
export interface Run {
  job_id: number;
  kind: string;
  job_group: string | null;
  pid: number;
  claimed: string | null;
  started: string;
  ended: string | null;
}

export const CREATE_RUNS_TABLE_SQL =
  'CREATE TABLE IF NOT EXISTS runs (run BIGINT AUTO_INCREMENT PRIMARY KEY, job_id BIGINT NOT NULL, kind VARCHAR(64) NOT NULL, job_group VARCHAR(64) NULL, pid INT NOT NULL, claimed TIMESTAMP(6) NULL, started TIMESTAMP(6) NOT NULL, ended TIMESTAMP(6) NULL)';

/** The most runs in progress at any one instant: a sweep over starts and ends, an end first where one meets a start; a run not ended counts to the end. */
export function mostAtOnce(runs: readonly Run[]): number {
  const events = runs.flatMap((run) => [
    { at: run.started, step: 1 },
    { at: run.ended ?? '9999', step: -1 },
  ]);
  events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.step - b.step));
  let now = 0;
  let most = 0;
  for (const { step } of events) most = Math.max(most, (now += step));
  return most;
}

const HANDLER = fileURLToPath(new URL('../../../test/fixtures/timed-runs-handler.mjs', import.meta.url));

/**
 * The timed runs of a test's database: `noRuns` empties the `runs` table for the test that
 * starts, `runsOf` reads a kind's runs in the order they started, and `work` starts `jobq work`
 * with the handler at concurrency 10 (RUN_MS and the like in `env`).
 */
export function timedRuns(context: { readonly db: TestDatabase }) {
  return {
    async noRuns(): Promise<void> {
      await context.db.admin.query(CREATE_RUNS_TABLE_SQL);
      await context.db.admin.query('DELETE FROM runs');
    },
    runsOf: (kind: string) => context.db.rows<Run>('SELECT job_id, kind, job_group, pid, claimed, started, ended FROM runs WHERE kind = ? ORDER BY run', [kind]),
    work: (args: string[] = [], env: Record<string, string> = {}): CliRun =>
      startCli(['work', '--handler', HANDLER, '--concurrency', '10', '--database-url', context.db.url, ...args], { JOBQ_DATABASE_URL: context.db.url, ...env }),
  };
}

/**
 * The most runs of a kind (of any kind: undefined; and of a group, if given) whose jobs were
 * claimed within any one window of `seconds`, by the server's clock.
 */
export async function mostClaimedWithin(db: TestDatabase, seconds: number, kind: string | undefined, group?: string): Promise<number> {
  const ofKind = kind === undefined ? '' : ' AND b.kind = a.kind';
  const ofGroup = group === undefined ? '' : ' AND b.job_group = a.job_group';
  const where = [...(kind === undefined ? [] : ['a.kind = ?']), ...(group === undefined ? [] : ['a.job_group = ?'])];
  const [{ most }] = await db.rows<{ most: number }>(
    `SELECT MAX((SELECT COUNT(*) FROM runs AS b WHERE b.claimed >= a.claimed AND b.claimed < a.claimed + INTERVAL ? MICROSECOND${ofKind}${ofGroup})) AS most
       FROM runs AS a${where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`}`,
    [Math.round(seconds * 1e6), ...(kind === undefined ? [] : [kind]), ...(group === undefined ? [] : [group])],
  );
  return Number(most);
}
