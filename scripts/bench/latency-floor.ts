/**
 * The latency scenario's floor: what the steps of a job's start cost on this server when done by
 * hand, against the same steps through jobq, one at a time (medians of STEPS). A job enqueued by
 * another process starts after its enqueue (an INSERT and its COMMIT), a wake-up (`KILL QUERY` of
 * the idle worker's wait) and a claim (a locking read, an UPDATE, a COMMIT); the sum of the raw
 * steps is the least any design on this server could reach, jobq's own steps what it reaches.
 */
import mysql from 'mysql2/promise';
import { JobQueue } from '../../src/index.js';

const STEPS = 300;

/** Medians in ms: raw steps, and jobq's. */
export interface LatencyFloor {
  roundTrip: number;
  insert: number;
  enqueue: number;
  rawClaim: number;
  claim: number;
  wake: number;
}

const median = (samples: number[]) => {
  samples.sort((a, b) => a - b);
  return Math.round(samples[Math.floor(samples.length / 2)]! * 100) / 100;
};

async function timed(samples: number[], step: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await step();
  samples.push(performance.now() - started);
}

/** Measures on the database at `url` (jobq's tables set up there, its queue empty; left empty). */
export async function measureLatencyFloor(url: string): Promise<LatencyFloor> {
  const raw = await mysql.createConnection({ uri: url });
  const waiter = await mysql.createConnection({ uri: url });
  const producer = await JobQueue.open({ url });
  const worker = await JobQueue.open({ url });
  const samples = { roundTrip: [] as number[], insert: [] as number[], enqueue: [] as number[], rawClaim: [] as number[], claim: [] as number[], wake: [] as number[] };
  try {
    await raw.query('CREATE TABLE jobq_floor (id BIGINT AUTO_INCREMENT PRIMARY KEY, claimed TINYINT NOT NULL DEFAULT 0, payload TEXT, KEY claimed (claimed, id)) ENGINE = InnoDB');
    for (let i = 0; i < STEPS; i++) {
      await timed(samples.roundTrip, () => raw.query('SELECT 1'));
      await timed(samples.insert, () => raw.query("INSERT INTO jobq_floor (payload) VALUES ('{}')"));
      await timed(samples.rawClaim, async () => {
        await waiter.query('START TRANSACTION');
        const [rows] = await waiter.query('SELECT id, payload FROM jobq_floor FORCE INDEX (claimed) WHERE claimed = 0 ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED');
        await waiter.query('UPDATE jobq_floor SET claimed = 1 WHERE id IN (?)', [(rows as Array<{ id: number }>).map((row) => row.id)]);
        await waiter.query('COMMIT');
      });
      await timed(samples.enqueue, () => producer.enqueue({ kind: 'floor', payload: {} }));
      let claim: Awaited<ReturnType<JobQueue['claim']>> | undefined;
      await timed(samples.claim, async () => (claim = await worker.claim({ batchSize: 10 })));
      await worker.complete(claim!);
    }
    const [[session]] = (await waiter.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number }]];
    for (let i = 0; i < STEPS / 3; i++) {
      const waiting = waiter.query('SELECT SLEEP(5)').catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await timed(samples.wake, async () => {
        await raw.query(`KILL QUERY ${Number(session.id)}`);
        await waiting;
      });
    }
  } finally {
    await raw.query('DROP TABLE IF EXISTS jobq_floor').catch(() => undefined);
    await Promise.all([raw.end(), waiter.end(), producer.close(), worker.close()]);
  }
  return {
    roundTrip: median(samples.roundTrip),
    insert: median(samples.insert),
    enqueue: median(samples.enqueue),
    rawClaim: median(samples.rawClaim),
    claim: median(samples.claim),
    wake: median(samples.wake),
  };
}
