/**
 * The article's consumer, as a child of `start-processing`: claims a batch, "processes" it for
 * --work-ms, then deletes it (or marks it done) in the turn that claims the next batch, for as
 * long as it is not told to stop. A stop request never interrupts a batch in hand: it is
 * processed and settled first, so a graceful stop leaves nothing claimed. The claiming itself is
 * the library's claim loop; turns and lanes come from the supervisor.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULTS } from '../config/defaults.js';
import type { JobSink } from '../claim/loop.js';
import { EMPTY_CLAIM, type Claim } from '../claim/types.js';
import { readConfig, report, reportConnection, runWorker, stopRequests, supervisorTurns } from '../processes/child-runtime.js';
import { ArticleTable } from './article-table.js';
import type { ConsumerConfig } from './children.js';
import { preferredFor } from './demo-jobs.js';

runWorker(async () => {
  const config = await readConfig<ConsumerConfig>('consumer');
  const stop = stopRequests();
  const table = await ArticleTable.open(config, reportConnection);
  try {
    // One batch in hand at a time, as in the article; it is finished when `processing` settles.
    let processing: Promise<void> | undefined;
    const sink: JobSink = {
      reserve: () => (processing === undefined ? config.batchSize : 0),
      accept: (claim) => {
        if (claim.jobs.length === 0) return;
        const batch = processBatch(claim).finally(() => {
          processing = undefined;
          loop.wake();
        });
        processing = batch;
      },
    };
    const processBatch = async (claim: Claim) => {
      if (config.workMs > 0) await sleep(config.workMs);
      for (const job of claim.jobs) loop.complete(claim, job.id);
    };
    const { batchSize, pick, leaseSeconds, keepDone } = config;
    // The article's consumer never fails a job (maxAttempts and retryDelayMs are unused): jobs it
    // cannot finish come back when their lease ends.
    const settings = { batchSize, ...preferredFor(pick), leaseSeconds, keepDone, maxAttempts: DEFAULTS.maxAttempts, retryDelayMs: 0, ownerId: config.number };
    const loop = table.claimLoop(settings, supervisorTurns, sink, ({ claim = EMPTY_CLAIM, settlement }) => {
      if (claim.jobs.length + claim.candidates + claim.failedIds.length + settlement.settled + settlement.lost === 0) return;
      report({
        type: 'cycle',
        claimed: claim.jobs.length,
        ids: config.reportIds ? claim.jobs.map((job) => job.id) : [],
        candidates: claim.candidates,
        failedIds: [...claim.failedIds],
        ...settlement,
      });
    });
    await loop.run(stop.signal);
    await processing;
    await loop.drain();
    const { deadlockRetries, lockWaitRetries } = table.counters;
    report({ type: 'retries', deadlocks: deadlockRetries, lockWaits: lockWaitRetries });
  } finally {
    await table.close();
  }
});
