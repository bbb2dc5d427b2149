/**
 * A generator child: inserts the article's random jobs, `commitEvery` per statement (one round
 * trip and one commit per batch, where the article sent ten single-row inserts and then COMMIT).
 * A batch keeps its job keys until it is known to be in: after a lost connection the same rows go
 * again, and the unique key turns any that did land into no-ops.
 */
import { openQueue, readConfig, report, runWorker, stopRequests } from './child-runtime.js';
import type { GeneratorConfig } from './messages.js';

runWorker(async () => {
  const config = await readConfig<GeneratorConfig>('generator');
  const stop = stopRequests();
  const queue = await openQueue(config);
  let inserted = 0;
  try {
    while (!stop.requested && (config.quota === undefined || inserted < config.quota)) {
      const size = Math.min(config.commitEvery, (config.quota ?? Infinity) - inserted);
      await queue.enqueueDemoJobs(size);
      inserted += size;
      report({ type: 'inserted', count: size });
    }
    const { deadlockRetries, lockWaitRetries } = queue.counters;
    report({ type: 'retries', deadlocks: deadlockRetries, lockWaits: lockWaitRetries });
  } finally {
    await queue.close();
  }
});
