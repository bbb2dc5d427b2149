/**
 * A generator child: inserts the article's random jobs, `commitEvery` per statement (one round
 * trip and one commit per batch, where the article sent ten single-row inserts and then COMMIT).
 * A batch keeps its job keys until it is known to be in: after a lost connection the same rows go
 * again, and the unique key turns any that did land into no-ops.
 */
import { readConfig, report, reportConnection, runWorker, stopRequests } from '../processes/child-runtime.js';
import { ArticleTable } from './article-table.js';
import type { GeneratorConfig } from './children.js';
import { demoRows } from './demo-jobs.js';

runWorker(async () => {
  const config = await readConfig<GeneratorConfig>('generator');
  const stop = stopRequests();
  const table = await ArticleTable.open(config, reportConnection);
  let inserted = 0;
  try {
    while (!stop.requested && (config.quota === undefined || inserted < config.quota)) {
      const size = Math.min(config.commitEvery, (config.quota ?? Infinity) - inserted);
      await table.insert(demoRows(size));
      inserted += size;
      report({ type: 'inserted', count: size });
    }
    const { deadlockRetries, lockWaitRetries } = table.counters;
    report({ type: 'retries', deadlocks: deadlockRetries, lockWaits: lockWaitRetries });
  } finally {
    await table.close();
  }
});
