import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { childConnection, shareOf, type ChildSpec } from '../processes/child-spec.js';
import type { ChildConfig, ChildConnection } from '../processes/messages.js';
import type { CandidatePick } from './demo-jobs.js';

/** The article's generator: inserts random jobs, `commitEvery` per statement, until its quota or a stop. */
export interface GeneratorConfig extends ChildConfig {
  role: 'generator';
  commitEvery: number;
}

/** The article's consumer: claims a batch, "processes" it for --work-ms, deletes it. */
export interface ConsumerConfig extends ChildConfig {
  role: 'consumer';
  batchSize: number;
  pick: CandidatePick;
  workMs: number;
  keepDone: boolean;
  leaseSeconds: number;
  /** Send each claim's ids (for the claim lines); off with --quiet, which only needs counts. */
  reportIds: boolean;
}

/** `jobq start-processing`: the article's generators and consumers. */
export interface ArticleRun {
  generators: number;
  consumers: number;
  /** Jobs to generate in all, shared out among the generators; undefined = until stopped. */
  jobs?: number;
  commitEvery: number;
  batchSize: number;
  pick: CandidatePick;
  workMs: number;
  keepDone: boolean;
  leaseSeconds: number;
  /** Claim lines are not wanted (--quiet): consumers report counts only. */
  quiet: boolean;
}

const script = (name: string) => fileURLToPath(new URL(`./${name}.js`, import.meta.url));

/** The generators, then the consumers. */
export function articleChildren(connection: ChildConnection, run: ArticleRun): ChildSpec[] {
  const children: ChildSpec[] = [];
  for (let number = 1; number <= run.generators; number++) {
    const quota = shareOf(run.jobs, run.generators, number);
    const config: GeneratorConfig = { role: 'generator', number, ...childConnection(connection, number), commitEvery: run.commitEvery, ...(quota !== undefined && { quota }) };
    children.push({ name: `generator ${number}`, script: script('generator'), config, producer: true });
  }
  const { batchSize, pick, workMs, keepDone, leaseSeconds, quiet } = run;
  for (let number = 1; number <= run.consumers; number++) {
    const config: ConsumerConfig = { role: 'consumer', number, ...childConnection(connection, number), batchSize, pick, workMs, keepDone, leaseSeconds, reportIds: !quiet };
    children.push({ name: `consumer ${number}`, script: script('consumer'), config });
  }
  return children;
}

/** Claim turns at once for the consumers: the cores and one more, never more than there are consumers. */
export const consumerTurns = (consumers: number) => Math.max(1, Math.min(availableParallelism() + 1, consumers));
