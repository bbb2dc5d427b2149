/**
 * A consumer child: claims batches, "processes" them (waits --work-ms), then deletes them (or
 * marks them done), for as long as it is not told to stop. A stop request never interrupts a
 * batch in hand: it is processed and settled first, so a graceful stop leaves nothing claimed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Claim } from '../queue/types.js';
import { openQueue, readConfig, report, runWorker, stopRequests } from './child-runtime.js';
import type { ConsumerConfig } from './messages.js';
import { IdleBackoff } from './idle-backoff.js';

runWorker(async () => {
  const config = readConfig<ConsumerConfig>('consumer');
  const stop = stopRequests();
  const queue = await openQueue(config);
  const idle = new IdleBackoff();
  const processBatch = async (claim: Claim): Promise<void> => {
    if (config.workMs <= 0) return;
    // A batch that takes longer than half its lease renews it, so a slow but healthy consumer is
    // never mistaken for a dead one and its jobs never handed to a second consumer meanwhile.
    const renewEveryMs = (config.leaseSeconds * 1000) / 2;
    const heartbeat = setInterval(() => void queue.extendLease(claim, config.leaseSeconds).catch(() => undefined), renewEveryMs);
    try {
      await sleep(config.workMs);
    } finally {
      clearInterval(heartbeat);
    }
  };
  const claimOptions = {
    batchSize: config.batchSize,
    pick: config.pick,
    ownerId: config.number,
    leaseSeconds: config.leaseSeconds,
    maxAttempts: config.maxAttempts,
    keepDone: config.keepDone,
    lane: { index: config.number - 1, count: config.lanes },
  };
  try {
    // The batch processed but not yet deleted: it is settled in the same transaction that claims
    // the next one (one commit per turn), or on its own when the consumer stops.
    let held: Claim | undefined;
    while (!stop.requested) {
      const { settlement, claim } = held === undefined
        ? { settlement: { settled: 0, lost: 0 }, claim: await queue.claim(claimOptions) }
        : await queue.completeAndClaim(held, claimOptions);
      held = undefined;
      if (claim.jobs.length + claim.candidates + claim.failedIds.length + settlement.settled + settlement.lost > 0) {
        report({
          type: 'cycle',
          claimed: claim.jobs.length,
          ids: config.reportIds ? claim.jobs.map((job) => job.id) : [],
          candidates: claim.candidates,
          failedIds: [...claim.failedIds],
          ...settlement,
        });
      }
      if (claim.jobs.length === 0) {
        // Candidates that were all taken mean work exists: try again at once. None at all: back off.
        await idle.wait(claim.candidates > 0, stop.signal);
        continue;
      }
      idle.reset();
      await processBatch(claim);
      held = claim;
    }
    if (held !== undefined) {
      const settlement = await queue.complete(held, { keepDone: config.keepDone });
      report({ type: 'cycle', claimed: 0, ids: [], candidates: 0, failedIds: [], ...settlement });
    }
    const { deadlockRetries, lockWaitRetries } = queue.counters;
    report({ type: 'retries', deadlocks: deadlockRetries, lockWaits: lockWaitRetries });
  } finally {
    await queue.close();
  }
});
