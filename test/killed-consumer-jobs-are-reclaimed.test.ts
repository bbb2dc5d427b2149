import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseClaimLines, startCli } from './helpers/run-cli.js';
import { databaseForTests, prefill } from './helpers/queue-fixtures.js';
import { workerPid } from './helpers/processes.js';

const db = databaseForTests(async (db) => {
  await prefill(db.url, 400);
});

test('kill -9 of a consumer holding a claim: its jobs are claimed again after the lease, by one consumer at a time', async () => {
  const run = startCli([
    'start-processing', '-g', '0', '-c', '4', '--batch-size', '10', '--work-ms', '400', '--lease', '2',
    '--pick', 'oldest', '--until-empty', '--keep-done', '--database-url', db.url,
  ]);
  await run.waitFor(/^consumer  1 #records = /m);
  const victim = workerPid(run.pid, 'consumer', 1);
  const victimsClaimAt = Date.now();
  process.kill(victim, 'SIGKILL');
  const result = await run.done;

  assert.equal(result.code, 7, 'a crashed worker makes the run end non-zero');
  assert.match(result.stderr, /^consumer 1 died \(killed by SIGKILL\); restarting$/m);
  assert.match(result.stderr, /^jobq: 1 worker crash\(es\); they were restarted and their leases recovered their jobs$/m);

  const claims = parseClaimLines(result.stdout);
  const lostClaim = claims.find((claim) => claim.consumer === 1)!;
  const counts = new Map<number, number>();
  for (const id of claims.flatMap((claim) => claim.ids)) counts.set(id, (counts.get(id) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id).sort((a, b) => a - b);
  assert.deepEqual(twice, lostClaim.ids, 'only the killed claim is handed out again, exactly once more');
  assert.ok([...counts.values()].every((n) => n <= 2));

  const rows = await db.rows<{ id: number; status: string; attempts: number; lease_expiries: number }>('SELECT id, status, attempts, lease_expiries FROM jobs');
  assert.equal(rows.length, 400);
  assert.ok(rows.every((row) => row.status === 'done'), 'every job processed, none lost');
  const retried = rows.filter((row) => row.lease_expiries === 1).map((row) => Number(row.id)).sort((a, b) => a - b);
  assert.deepEqual(retried, lostClaim.ids, 'the second claim happened only after the first lease ran out');
  assert.ok(rows.every((row) => row.attempts === 1), 'the run whose lease ran out spent no attempt');
  // Each job of the killed claim came back alone: it might have been what killed the consumer.
  assert.ok(claims.filter((claim) => claim.ids.some((id) => lostClaim.ids.includes(id)) && claim !== lostClaim).every((claim) => claim.ids.length === 1));
  assert.ok(Date.now() - victimsClaimAt >= 2000, 'the run lasted past the lease');
});
