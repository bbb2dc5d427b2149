import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { JobQueue, type Claim, type ClaimedJob } from '../../src/index.js';
import { duplicates } from './run-cli.js';
import { waitUntil } from './wait.js';

/**
 * Where the queue contract runs: a single server, a partitioned table, the nodes of a Galera
 * cluster or of a Group Replication group.
 */
export interface ContractTopology {
  /** Why it cannot run here (another make of server), or undefined. */
  unavailable(): string | undefined;
  /**
   * A fresh, empty, set-up queue of its own for one test: its URL on each server that claims (one
   * for a single server). Claimers spread over them; the topology drops it after the file.
   */
  freshQueue(): Promise<string[]>;
  /** The table is partitioned: unique jobs are refused there (docs/operations.md). */
  partitioned?: boolean;
}

/**
 * The queue contract, the same on every topology: claims are exclusive, a settle counts only
 * with its claim's token, a lease that runs out hands the jobs on with the attempt counted,
 * attempts end in `failed`, a paused kind waits, a limited kind never runs past its limit, a
 * unique key holds one job, a running job is cancelled through any server, the most urgent
 * priority goes first.
 */
export function queueContract(name: string, topology: ContractTopology): void {
  const contract = (what: string, body: (urls: string[]) => Promise<void>, { unique = false } = {}) =>
    test(`queue contract on ${name}: ${what}`, async (t: TestContext) => {
      const unavailable = unique && topology.partitioned === true ? 'a partitioned table takes no unique jobs' : topology.unavailable();
      if (unavailable !== undefined) return t.skip(unavailable);
      await body(await topology.freshQueue());
    });

  contract('4 claimers over 2,000 jobs: each job claimed once, none left', async (urls) => {
    await withQueues(urls, 4, async (queues) => {
      await queues[0]!.enqueueMany(Array.from({ length: 2000 }, (_, n) => ({ kind: 'contract', payload: { n } })));
      const claimed: number[] = [];
      await Promise.all(
        queues.map(async (queue) => {
          let claim = await queue.claim({ batchSize: 25 });
          while (claim.jobs.length > 0 || (await queue.hasPendingWork())) {
            claimed.push(...claim.jobs.map((job) => job.id));
            ({ claim } = await queue.completeAndClaim(claim, { batchSize: 25 }));
          }
        }),
      );
      assert.deepEqual(duplicates(claimed), [], 'no job claimed twice');
      assert.equal(new Set(claimed).size, 2000, 'every job claimed');
      await waitUntil(async () => (await queues[0]!.stats()).total === 0, 'every job is completed and deleted');
    });
  });

  contract('a lease that runs out: the jobs are claimed again, each alone, with the expiry counted and not the attempt; the first claim settles none of them', async (urls) => {
    await withQueues(urls, 2, async ([first, second]) => {
      await first!.enqueueMany([{ kind: 'contract' }, { kind: 'contract' }, { kind: 'contract' }]);
      const expired = await first!.claim({ batchSize: 3, leaseSeconds: 1 });
      assert.equal(expired.jobs.length, 3);
      const again: Claim[] = [];
      await waitUntil(async () => {
        const claim = await second!.claim({ batchSize: 3 });
        if (claim.jobs.length > 0) again.push(claim);
        return again.length === 3;
      }, 'the jobs are claimed again once the lease has run out');
      // A job whose lease ran out may be what killed its worker: it is claimed alone.
      assert.deepEqual(again.map((claim) => claim.jobs.map((job) => [job.id, job.attempts, job.leaseExpiries])), expired.jobs.map((job) => [[job.id, 1, 1]]));
      assert.deepEqual(await first!.complete(expired), { settled: 0, lost: 3 }, 'the old token settles nothing');
      for (const claim of again) assert.deepEqual(await second!.complete(claim), { settled: 1, lost: 0 });
    });
  });

  contract('a failing job is retried until maxAttempts, then ends failed with its error', async (urls) => {
    await withQueues(urls, 1, async ([queue]) => {
      const id = await queue!.enqueue({ kind: 'contract' });
      const failures: number[] = [];
      for (let attempt = 1; attempt <= 3; attempt++) {
        let claim: Claim | undefined;
        await waitUntil(async () => ((claim = await queue!.claim({ batchSize: 1 })), claim.jobs.length > 0), `attempt ${attempt} is claimed`);
        assert.deepEqual(claim!.jobs.map((job) => [job.id, job.attempts]), [[id, attempt]]);
        failures.push((await queue!.fail(claim!, new Error(`boom ${attempt}`), { maxAttempts: 3, retryDelayMs: 0 })).failed);
      }
      assert.deepEqual(failures, [0, 0, 1], 'the third failure is final');
      assert.equal((await queue!.claim({ batchSize: 1 })).jobs.length, 0, 'a failed job is not claimed');
      assert.deepEqual((await queue!.failedJobs()).map((job) => [job.id, job.attempts, job.lastError]), [[id, 3, 'boom 3']]);
    });
  });

  contract('a paused kind is not claimed until it is resumed', async (urls) => {
    await withQueues(urls, 1, async ([queue]) => {
      await queue!.enqueueMany([{ kind: 'paused' }, { kind: 'open' }, { kind: 'paused' }]);
      await queue!.pause('paused');
      const whilePaused = await queue!.claim({ batchSize: 10 });
      assert.deepEqual(whilePaused.jobs.map((job) => job.kind), ['open']);
      await queue!.resume('paused');
      let resumed: Claim | undefined;
      await waitUntil(async () => ((resumed = await queue!.claim({ batchSize: 10 })), resumed.jobs.length > 0), 'the resumed kind is claimed');
      assert.deepEqual(resumed!.jobs.map((job) => job.kind), ['paused', 'paused']);
    });
  });

  contract('a kind limited to 3: 4 claimers over 120 of its jobs never hold more than 3 at once, each job once', async (urls) => {
    await withQueues(urls, 4, async (queues) => {
      await queues[0]!.setLimit('capped', { concurrency: 3 });
      await queues[0]!.enqueueMany(Array.from({ length: 120 }, () => ({ kind: 'capped' })));
      let held = 0;
      let most = 0;
      const claimed = await claimEveryJob(queues, (jobs, step) => {
        held += step * jobs.length;
        most = Math.max(most, held);
      });
      assert.deepEqual(duplicates(claimed), [], 'no job claimed twice');
      assert.equal(new Set(claimed).size, 120, 'every job claimed');
      assert.ok(most <= 3, `never more than 3 held at once: ${most}`);
    });
  });

  contract('a limit of 2 per group: 4 claimers over 6 groups of 20 jobs never hold more than 2 of a group at once, each job once', async (urls) => {
    await withQueues(urls, 4, async (queues) => {
      await queues[0]!.setLimit('shared', { groupConcurrency: 2 });
      await queues[0]!.enqueueMany(Array.from({ length: 120 }, (_, n) => ({ kind: 'shared', group: `g${n % 6}` })));
      const held = new Map<string, number>();
      let mostOfAGroup = 0;
      let mostInAll = 0;
      const claimed = await claimEveryJob(queues, (jobs, step) => {
        for (const job of jobs) held.set(job.group!, (held.get(job.group!) ?? 0) + step);
        mostOfAGroup = Math.max(mostOfAGroup, ...held.values());
        mostInAll = Math.max(mostInAll, [...held.values()].reduce((sum, n) => sum + n, 0));
      });
      assert.deepEqual(duplicates(claimed), [], 'no job claimed twice');
      assert.equal(new Set(claimed).size, 120, 'every job claimed');
      assert.ok(mostOfAGroup <= 2, `never more than 2 of a group held at once: ${mostOfAGroup}`);
      assert.ok(mostInAll > 2, `jobs of different groups were held together: at most ${mostInAll}`);
    });
  });

  contract('10 enqueues of one unique key at once, spread over the servers: one job, its id for all', async (urls) => {
    await withQueues(urls, 10, async (queues) => {
      const ids = await Promise.all(queues.map((queue, n) => queue.enqueue({ kind: 'contract', payload: { n }, unique: { key: 'nightly-report' } })));
      assert.equal(new Set(ids).size, 1, `one id for all: ${ids.join(', ')}`);
      assert.deepEqual(await queues[0]!.jobIdsByUniqueKey(['nightly-report']), new Map([['nightly-report', ids[0]]]));
    });
  }, { unique: true });

  contract('a job running through one server is cancelled through another: its handler sees the signal, it ends cancelled, waitFor rejects; a result kept is read anywhere', async (urls) => {
    await withQueues(urls, 3, async ([workerQueue, canceller, watcher]) => {
      const long = await canceller!.enqueue({ kind: 'long' });
      const sum = await canceller!.enqueue({ kind: 'sum', payload: [1, 2, 3] });
      let signalled: unknown;
      const worker = workerQueue!.work(
        {
          long: (job) => new Promise((_, reject) => job.signal.addEventListener('abort', () => reject((signalled = job.signal.reason)))),
          sum: (job) => (job.payload as number[]).reduce((a, b) => a + b, 0),
        },
        { keepResults: true },
      );
      try {
        assert.equal(await watcher!.waitFor(sum, { timeoutMs: 30_000 }), 6);
        await waitUntil(async () => (await watcher!.job(long))?.status === 'claimed', 'the long job runs');
        assert.deepEqual((await canceller!.cancel([long])).cancelling.map((job) => job.id), [long]);
        await assert.rejects(watcher!.waitFor(long, { timeoutMs: 30_000 }), { name: 'JobCancelled' });
      } finally {
        await worker.stop();
      }
      assert.equal((signalled as Error | undefined)?.name, 'JobCancelled');
      assert.equal(worker.counters.cancelled, 1);
      assert.equal((await canceller!.job(long))!.status, 'cancelled');
    });
  });

  contract('the most urgent priority is claimed first, then the oldest', async (urls) => {
    await withQueues(urls, 1, async ([queue]) => {
      const ids = [];
      for (const priority of [5, -3, 0, -3]) ids.push(await queue!.enqueue({ kind: 'contract', priority }));
      const order: number[] = [];
      for (let claim = await queue!.claim({ batchSize: 1 }); claim.jobs.length > 0; ) {
        order.push(claim.jobs[0]!.id);
        ({ claim } = await queue!.completeAndClaim(claim, { batchSize: 1 }));
      }
      assert.deepEqual(order, [ids[1], ids[3], ids[2], ids[0]]);
    });
  });
}

/** `count` queues, one per URL in turn, closed after `work`. */
async function withQueues(urls: string[], count: number, work: (queues: JobQueue[]) => Promise<void>): Promise<void> {
  const queues = await Promise.all(Array.from({ length: count }, (_, i) => JobQueue.open(urls[i % urls.length]!)));
  try {
    await work(queues);
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
  }
}

/**
 * A fresh queue on a cluster for each contract test: a database of its own, its URL starting at
 * each node in turn, once every node has its table (a Group Replication member applies what
 * another committed a little later: a CI run's claimer found no table there).
 */
export function clusterQueues(cluster: { url(database: string, nodes?: readonly number[]): string }): () => Promise<string[]> {
  let made = 0;
  return async () => {
    const database = `contract_${++made}`;
    const queue = await JobQueue.open({ url: cluster.url(database), createDatabase: true });
    try {
      await queue.setup();
    } finally {
      await queue.close();
    }
    const urls = [[1, 2, 3], [2, 3, 1], [3, 1, 2]].map((nodes) => cluster.url(database, nodes));
    for (const url of urls) {
      await waitUntil(async () => {
        const there = await JobQueue.open(url);
        try {
          await there.assertReady();
          return true;
        } catch {
          return false;
        } finally {
          await there.close();
        }
      }, `the table is on the first node of ${url}`);
    }
    return urls;
  };
}

/**
 * One claimer per queue, 5 jobs a claim, each claim's jobs held 5 ms, until nothing is left: the
 * ids claimed. `hold` hears of each claim's jobs when they are taken (+1) and before their
 * completion starts (-1): within what the server counts as running.
 */
async function claimEveryJob(queues: readonly JobQueue[], hold: (jobs: readonly ClaimedJob[], step: 1 | -1) => void): Promise<number[]> {
  const claimed: number[] = [];
  await Promise.all(
    queues.map(async (queue) => {
      for (;;) {
        const claim = await queue.claim({ batchSize: 5 });
        if (claim.jobs.length === 0) {
          if (!(await queue.hasPendingWork())) return;
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        hold(claim.jobs, 1);
        claimed.push(...claim.jobs.map((job) => job.id));
        await new Promise((resolve) => setTimeout(resolve, 5));
        hold(claim.jobs, -1);
        await queue.complete(claim);
      }
    }),
  );
  return claimed;
}
