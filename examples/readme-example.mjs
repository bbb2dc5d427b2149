import { JobQueue } from 'jobq';

// The URL comes from $JOBQ_DATABASE_URL, ./.env, or mysql://root@127.0.0.1:3306/jobq.
const queue = await JobQueue.open({ createDatabase: true });
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
