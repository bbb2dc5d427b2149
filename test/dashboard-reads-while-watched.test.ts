import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { StatsSampler } from '../src/dashboard/sampler.js';
import { queueForTests } from './helpers/queue-fixtures.js';
import { waitUntil } from './helpers/wait.js';

// The dashboard's stats count rows: it reads them only while a page asks, once every 2 s for all
// the pages that do. Unwatched, it reads the running totals and the highest id, for its chart.

const context = queueForTests();

test('unwatched, the dashboard reads no stats; three pages asking share one reading every 2 s; once they leave it stops', async () => {
  const { queue } = context;
  await queue.enqueueMany(Array.from({ length: 100 }, () => ({ kind: 'email' })));
  let statsReads = 0;
  const stats = queue.stats.bind(queue);
  queue.stats = async () => {
    statsReads++;
    return stats();
  };
  const sampler = new StatsSampler(queue, (error) => assert.fail(error as Error));
  const points = (count: number) => waitUntil(() => sampler.rates.length >= count, `${count} points of throughput`);
  await sampler.start();
  try {
    await points(2);
    assert.equal(statsReads, 0, 'no stats read while nobody watches');
    await queue.enqueueMany(Array.from({ length: 50 }, () => ({ kind: 'email' })));
    await waitUntil(() => sampler.rates.some((point) => point.enqueuedPerSecond > 0), 'the chart sees the enqueued jobs');

    // Three pages, each asking every 500 ms (the page asks every 2 s) for 4.5 s.
    const readings = new Set<number>();
    for (let ask = 0; ask < 9; ask++) {
      const latest = await Promise.all([1, 2, 3].map(() => sampler.forViewer()));
      for (const reading of latest) readings.add(reading!.at.getTime());
      assert.equal(latest[0]!.stats.counts.unclaimed, 150);
      await sleep(500);
    }
    assert.ok(statsReads >= 2 && statsReads <= 4, `the stats were read ${statsReads} times for three pages over 4.5 s`);
    assert.equal(readings.size, statsReads, 'every reading served every page');

    // Nobody asks any more: within 5 s the dashboard is back to the totals alone.
    const whenLeft = statsReads;
    const after = sampler.rates.length;
    await points(after + 3);
    const settled = statsReads;
    assert.ok(settled - whenLeft <= 3, `${settled - whenLeft} stats read after the pages left`);
    await points(after + 5);
    assert.equal(statsReads, settled, 'no stats read once nobody watches');
  } finally {
    sampler.stop();
  }
});
