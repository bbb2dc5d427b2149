// A handler for `jobq work --handler examples/print-handler.mjs`: prints each job, and fails the
// ones whose payload asks for it (to show retries).
export default async function handle(job) {
  if (job.payload?.fail) throw new Error(`job ${job.id} asked to fail`);
  console.log(`handled job ${job.id} (${job.kind}): ${JSON.stringify(job.payload)}`);
}
