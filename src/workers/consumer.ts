/**
 * A consumer child: claims batches, processes them (the user's --handler, or a --work-ms wait),
 * then deletes them (or marks them done), for as long as it is not told to stop. A stop request
 * never interrupts a batch in hand: it is processed and settled first, so a graceful stop leaves
 * nothing claimed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobQueue } from '../queue/job-queue.js';
import type { Claim } from '../queue/types.js';
import { duringTurn, openQueue, readConfig, report, runWorker, stopRequests } from './child-runtime.js';
import { loadHandler, runHandler, type Handler } from './handler-module.js';
import { IdleBackoff } from './idle-backoff.js';
import type { ConsumerConfig } from './messages.js';

runWorker(async () => {
  const config = readConfig<ConsumerConfig>('consumer');
  const stop = stopRequests();
  const handler = config.handler === undefined ? undefined : await loadHandler(config.handler);
  const queue = await openQueue(config);
  const idle = new IdleBackoff();
  const claimOptions = {
    batchSize: config.batchSize,
    pick: config.pick,
    ownerId: config.number,
    leaseSeconds: config.leaseSeconds,
    maxAttempts: config.maxAttempts,
    keepDone: config.keepDone,
    ...(config.kind !== undefined && { kind: config.kind }),
  };
  // Keeps the lease of the batch in hand while it is processed and while it waits for the turn
  // that settles it, however long the supervisor makes it wait.
  let renewal: LeaseRenewal | undefined;
  try {
    // The batch processed but not yet deleted: it is settled in the same transaction that claims
    // the next one (one commit per turn), or on its own when the consumer stops.
    let held: Claim | undefined;
    while (!stop.requested) {
      const previous = held;
      const { settlement, claim } = await duringTurn(async (lane) => {
        renewal?.stop();
        const options = lane === undefined ? claimOptions : { ...claimOptions, lane };
        return previous === undefined
          ? { settlement: { settled: 0, lost: 0 }, claim: await queue.claim(options) }
          : queue.completeAndClaim(previous, options);
      });
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
      renewal = renewLease(queue, claim, config.leaseSeconds);
      held = await processBatch(queue, claim, config, handler);
    }
    if (held !== undefined) {
      const settlement = await queue.complete(held, { keepDone: config.keepDone });
      report({ type: 'cycle', claimed: 0, ids: [], candidates: 0, failedIds: [], ...settlement });
    }
    const { deadlockRetries, lockWaitRetries } = queue.counters;
    report({ type: 'retries', deadlocks: deadlockRetries, lockWaits: lockWaitRetries });
  } finally {
    renewal?.stop();
    await queue.close();
  }
});

/**
 * Runs the batch; returns what is left to complete. Jobs the handler threw on are failed at once
 * (back to the queue after a growing delay, or to `failed` when out of attempts).
 */
async function processBatch(queue: JobQueue, claim: Claim, config: ConsumerConfig, handler: Handler | undefined): Promise<Claim> {
  if (handler === undefined) {
    if (config.workMs > 0) await sleep(config.workMs);
    return claim;
  }
  const failures = await runHandler(handler, claim.jobs, config.concurrency);
  for (const [id, error] of failures) {
    const job = claim.jobs.find((j) => j.id === id)!;
    await queue.fail(claim, error, { ids: [id], maxAttempts: config.maxAttempts, retryDelayMs: config.retryDelayMs });
    const message = error instanceof Error ? error.message : String(error);
    report({ type: 'job-failed', id, attempt: job.attempts, error: message, final: job.attempts >= config.maxAttempts });
  }
  return failures.size === 0 ? claim : { ...claim, jobs: claim.jobs.filter((job) => !failures.has(job.id)) };
}

interface LeaseRenewal {
  stop(): void;
}

/**
 * Renews a claim's lease every half lease until stopped, so that a slow but healthy consumer is
 * never taken for a dead one and its jobs never handed to a second consumer meanwhile.
 */
function renewLease(queue: JobQueue, claim: Claim, leaseSeconds: number): LeaseRenewal {
  const timer = setInterval(() => void queue.extendLease(claim, leaseSeconds).catch(() => undefined), (leaseSeconds * 1000) / 2);
  return { stop: () => clearInterval(timer) };
}
