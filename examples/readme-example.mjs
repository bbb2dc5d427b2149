import { JobQueue } from 'jobq';

const queue = await JobQueue.open(process.env.JOBQ_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/jobq');
await queue.setup();
await queue.enqueueMany([
  { kind: 'email', payload: { to: 'ann@example.com' } },
  { kind: 'email', payload: { to: 'bob@example.com' }, delaySeconds: 3600 },
]);

const claim = await queue.claim({ batchSize: 10, kind: 'email', leaseSeconds: 30 });
for (const job of claim.jobs) console.log(`sending to ${job.payload.to}, attempt ${job.attempts}`);
console.log(await queue.complete(claim));

console.log((await queue.stats()).counts);
await queue.close();
