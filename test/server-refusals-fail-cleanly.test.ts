import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JobQueue } from '../src/index.js';
import { SERVER_ADDRESS, SERVER_URL } from './helpers/test-database.js';
import { runCli } from './helpers/run-cli.js';
import { databaseForRefusals, refusedCleanly, type Refusal } from './helpers/refused-cleanly.js';

// What a server refuses, or stores, as jobq asks it: a user, a database, a table, payloads at the
// servers' limits, keys held already. Input refused before any server is asked is in
// bad-input-fails-cleanly.test.ts.

const db = databaseForRefusals();
const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

const refusals: Refusal[] = [
  { name: 'a wrong password', args: () => ['stats', '--database-url', `mysql://jobq_nobody:wrong@${SERVER_ADDRESS}/${db.name}`], code: 3, stderr: new RegExp(`^jobq: access denied for user "jobq_nobody" at ${SERVER_ADDRESS}; check the user and password in --database-url$`) },
  { name: 'an unknown database', args: () => ['stats', '--database-url', `${SERVER_URL}/jobq_no_such_db`], code: 3, stderr: new RegExp(`^jobq: database "jobq_no_such_db" does not exist at ${SERVER_ADDRESS}; run "jobq setup-tables" to create it$`) },
  { name: 'a missing table', args: () => ['start-processing', '--table', 'missing', '--database-url', db.url], code: 5, stderr: /^jobq: table "missing" does not exist in database "\w+"; run "jobq setup-tables" first$/ },
  { name: 'a table of the wrong shape', args: () => ['start-processing', '--table', 'not_jobs', '--database-url', db.url], code: 5, stderr: /^jobq: table "not_jobs" in database "\w+" was not made by jobq \(columns: id,note\); pick another --table or drop it$/ },
];

refusedCleanly(db, refusals);

test('a password holding a literal @ is never printed, not even in part', async () => {
  const result = await runCli(['stats', '--database-url', `mysql://jobq_nobody:p@ss-w0rd@${SERVER_ADDRESS}/jobq`]);
  assert.equal(result.code, 3, result.stderr);
  assert.ok(!/ss-w0rd|p@ss/.test(result.stderr + result.stdout), result.stderr);
});

test('--stdin: a line the servers cannot store stops the input there, saying which line and what was queued before it', async () => {
  const lines = [...Array.from({ length: 1000 }, (_, n) => JSON.stringify({ kind: 'bulk', payload: { n } })), JSON.stringify({ kind: 'bulk', payload: JSON.parse(deep(40)) })];
  const before = Number((await db.rows<{ n: number }>('SELECT COUNT(*) AS n FROM jobs'))[0]!.n);
  const result = await runCli(['enqueue', '--stdin', '--database-url', db.url], {}, `${lines.join('\n')}\n`);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /^jobq: line 1001: the payload cannot be stored: it is nested more than 31 levels deep, the most the servers store; queued 1000 jobs \(ids \d+\.\.\d+\) from the lines before 1001; nothing from line 1001 on was written\n$/);
  assert.equal(Number((await db.rows<{ n: number }>('SELECT COUNT(*) AS n FROM jobs'))[0]!.n), before + 1000);
});

test('the library refuses what the servers cannot store with a JobqError, before anything is sent', async () => {
  const queue = await JobQueue.open(db.url);
  try {
    await assert.rejects(queue.enqueue({ kind: 'k', payload: JSON.parse(deep(32)) }), { name: 'JobqError', message: /^job: the payload cannot be stored: it is nested more than 31 levels deep/ });
    await assert.rejects(queue.enqueueMany([{ kind: 'k' }, { kind: 'k', payload: { s: 'a\ud800b' } }]), { name: 'JobqError', message: /^job 2: the payload cannot be stored: a string in it holds half of a UTF-16 surrogate pair/ });
    assert.throws(() => queue.work({ '': async () => undefined }), { name: 'JobqError', message: 'work(): kind must be a string of 1-64 characters, not ""' });
    const id = await queue.enqueue({ kind: 'k', payload: { deep: JSON.parse(deep(30)), emoji: '\ud83d\ude00' } });
    assert.ok(id > 0, 'nesting of 31 and whole surrogate pairs are stored');
    await queue.cancel([id]);
  } finally {
    await queue.close();
  }
});

test('--stdin lines that repeat a key are counted once', async () => {
  const lines = ['{"kind": "k", "key": "same-key"}', '{"kind": "k", "key": "same-key"}', '{"kind": "k", "key": "same-key"}', '{"kind": "k"}'];
  const result = await runCli(['enqueue', '--stdin', '--database-url', db.url], {}, `${lines.join('\n')}\n`);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^queued 2 jobs \(ids \d+\.\.\d+\); 2 lines repeated the key of an earlier line, which is queued once\n$/);
  assert.equal((await db.rows("SELECT id FROM jobs WHERE job_key = 'same-key'")).length, 1);
  const [{ id }] = await db.rows<{ id: number }>("SELECT id FROM jobs WHERE job_key = 'same-key'");
  const again = await runCli(['enqueue', '--kind', 'k', '--key', 'same-key', '--database-url', db.url]);
  assert.equal(again.stdout, `queued 0 jobs; its key was held already, by job ${id}\n`, 'a key held already adds nothing, and says so');
  const mixed = await runCli(['enqueue', '--stdin', '--database-url', db.url], {}, '{"kind": "k", "key": "same-key"}\n{"kind": "k", "key": "fresh-key"}\n');
  assert.match(mixed.stdout, /^queued 1 job \(ids \d+\.\.\d+\); 1 line named a key a job held already\n$/);
});
