import { JobQueue } from 'jobq-mysql';

// The URL comes from $JOBQ_DATABASE_URL, ./.env, or mysql://root@127.0.0.1:3306/jobq.
const queue = await JobQueue.open({ createDatabase: true });
await queue.setup();
await queue.enqueue({ kind: 'email', payload: { to: 'ann@example.com' } });
await queue.enqueue({ kind: 'email', payload: { to: 'bob@example.com' }, delaySeconds: 3600 });

// Handlers run in this process, ten at a time; `once` stops when nothing due is left.
const worker = queue.work(
  { email: async (job) => console.log(`sending to ${job.payload.to}, attempt ${job.attempts}`) },
  { concurrency: 10, once: true },
);
worker.on('failed', (job, error, { final }) => console.error(`job ${job.id}: ${error.message}${final ? '' : ' (will retry)'}`));
await worker.finished;

console.log(`${worker.counters.completed} completed`);
console.log(JSON.stringify((await queue.stats()).counts));
await queue.close();
