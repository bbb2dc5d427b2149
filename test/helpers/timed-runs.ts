/**
 * A run of test/fixtures/timed-runs-handler.mjs as its `runs` table holds it: the job, its kind and
 * group, the process, and its start and end by the server's clock (strings that sort as times).
 */
export interface Run {
  job_id: number;
  kind: string;
  job_group: string | null;
  pid: number;
  started: string;
  ended: string | null;
}

export const CREATE_RUNS_TABLE_SQL =
  'CREATE TABLE IF NOT EXISTS runs (run BIGINT AUTO_INCREMENT PRIMARY KEY, job_id BIGINT NOT NULL, kind VARCHAR(64) NOT NULL, job_group VARCHAR(64) NULL, pid INT NOT NULL, started TIMESTAMP(6) NOT NULL, ended TIMESTAMP(6) NULL)';

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
