import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { test } from 'node:test';
import { databaseForRefusals, refusedCleanly, type Refusal } from './helpers/refused-cleanly.js';

// Input jobq refuses before it asks a server anything, the same on every make of server: with
// several servers, npm test runs this file against the first only. What a server refuses is in
// server-refusals-fail-cleanly.test.ts.

const HANDLERS = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));
const db = databaseForRefusals();

const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const refusals: Refusal[] = [
  { name: 'a table name that is not an identifier', args: () => ['stats', '--table', 'jobs; DROP TABLE x', '--database-url', db.url], code: 2, stderr: /^jobq: invalid table name "jobs; DROP TABLE x": use 1-64 letters, digits or _ \(not digits only\)$/ },
  { name: 'a malformed URL', args: () => ['stats', '--database-url', 'localhost:3306/jobq'], code: 2, stderr: /^jobq: invalid database URL "localhost:3306\/jobq": scheme must be mysql:, not localhost: \(expected mysql:\/\/user:password@host:3306\/database, or host1:3306,host2:3306 for several servers\)$/ },
  { name: 'a replica URL without a database', args: () => ['start-processing', '--replica-url', 'mysql://root@127.0.0.1:3306', '--database-url', db.url], code: 2, stderr: /^jobq: invalid replica URL "mysql:\/\/root@127\.0\.0\.1:3306": no database name after the host/ },
  { name: 'a replica lag bound of zero', args: () => ['work', '--handler', HANDLERS + 'email-handlers.mjs', '--replica-max-lag', '0', '--database-url', db.url], code: 2, stderr: /^error: option '--replica-max-lag <seconds>' argument '0' is invalid\. expected a number of seconds from 0\.001 to 86400/ },
  { name: 'a bad server in a list', args: () => ['stats', '--database-url', 'mysql://root@127.0.0.1:3306,bad host/jobq'], code: 2, stderr: /^jobq: invalid database URL .*: "bad host" is not a host\[:port\]/ },
  {
    name: 'a list of servers none of which answers',
    args: () => ['stats', '--database-url', 'mysql://root@127.0.0.1:1,127.0.0.1:2/jobq'],
    code: 3,
    stderr: /^jobq: no server in --database-url could be used: cannot connect to the server at 127\.0\.0\.1:1: connection refused; .* \| cannot connect to the server at 127\.0\.0\.1:2: connection refused; /,
  },
  { name: 'a URL without a database', args: () => ['stats', '--database-url', 'mysql://root@127.0.0.1:3306'], code: 2, stderr: /^jobq: invalid database URL .*: no database name after the host/ },
  { name: 'an unreachable server', args: () => ['stats', '--database-url', 'mysql://root@127.0.0.1:1/jobq'], code: 3, stderr: /^jobq: cannot connect to the server at 127\.0\.0\.1:1: connection refused; is MySQL\/MariaDB running there\?/ },
  { name: 'a non-numeric flag', args: () => ['start-processing', '--consumers', 'ten', '--database-url', db.url], code: 2, stderr: /^error: option '-c, --consumers <n>' argument 'ten' is invalid\. expected a whole number from 0 to 64, got "ten"\./ },
  { name: 'an out-of-range batch size', args: () => ['start-processing', '--batch-size', '5000', '--database-url', db.url], code: 2, stderr: /argument '5000' is invalid\. expected a whole number from 1 to 1000/ },
  { name: 'one partition', args: () => ['setup-tables', '--partitions', '1', '--database-url', db.url], code: 2, stderr: /^jobq: partitions must be 0 \(not partitioned\) or a whole number from 2 to 256, not 1$/ },
  { name: 'too many partitions', args: () => ['setup-tables', '--partitions', '1000', '--database-url', db.url], code: 2, stderr: /^error: option '--partitions <n>' argument '1000' is invalid\. expected a whole number from 0 to 256/ },
  { name: 'an unknown partition method', args: () => ['setup-tables', '--partitions', '4', '--partition-by', 'range', '--database-url', db.url], code: 2, stderr: /argument 'range' is invalid\. Allowed choices are hash, key\./ },
  { name: 'an unknown flag', args: () => ['start-processing', '--consumerz', '3', '--database-url', db.url], code: 2, stderr: /^error: unknown option '--consumerz'/ },
  { name: 'an unknown pick', args: () => ['start-processing', '--pick', 'newest', '--database-url', db.url], code: 2, stderr: /argument 'newest' is invalid\. Allowed choices are random-prefix, oldest\./ },
  { name: '--until-empty with unlimited generators', args: () => ['start-processing', '--until-empty', '--database-url', db.url], code: 2, stderr: /^jobq: --until-empty with generators needs --jobs N/ },
  { name: 'a payload that is not JSON', args: () => ['enqueue', '--payload', '{to: ann}', '--database-url', db.url], code: 2, stderr: /^jobq: --payload is not JSON \(.*\); quote it, e\.g\. --payload '\{"to": "ann"\}'$/ },
  { name: 'a payload over 64 KiB', args: () => ['enqueue', '--payload', JSON.stringify('x'.repeat(70_000)), '--database-url', db.url], code: 2, stderr: /^jobq: the job: the payload is 70002 bytes as JSON; the limit is 65536$/ },
  { name: 'a kind too long', args: () => ['enqueue', '--kind', 'k'.repeat(65), '--database-url', db.url], code: 2, stderr: /^jobq: --kind: kind must be a string of 1-64 characters/ },
  { name: 'an empty kind', args: () => ['enqueue', '--kind', '', '--database-url', db.url], code: 2, stderr: /^jobq: --kind: kind must be a string of 1-64 characters, not ""$/ },
  { name: 'an empty kind to work on', args: () => ['work', '--handler', HANDLERS + 'email-handlers.mjs', '--kind', '', '--database-url', db.url], code: 2, stderr: /^jobq: --kind: kind must be a string of 1-64 characters, not ""$/ },
  { name: 'a kind that was not UTF-8', args: () => ['enqueue', '--kind', 'em\ufffdail', '--database-url', db.url], code: 2, stderr: /^jobq: --kind holds bytes that are not UTF-8 \(or a U\+FFFD\); give it as UTF-8 text$/ },
  { name: 'a payload nested 32 deep', args: () => ['enqueue', '--payload', deep(32), '--database-url', db.url], code: 2, stderr: /^jobq: the job: the payload cannot be stored: it is nested more than 31 levels deep, the most the servers store$/ },
  { name: 'a payload with half a surrogate pair', args: () => ['enqueue', '--payload', '"\\ud800"', '--database-url', db.url], code: 2, stderr: /^jobq: the job: the payload cannot be stored: a string in it holds half of a UTF-16 surrogate pair/ },
  { name: 'a number a double cannot hold', args: () => ['enqueue', '--payload', '{"n": 1e400}', '--database-url', db.url], code: 2, stderr: /^jobq: --payload cannot be stored as given: the number 1e400 is beyond what JSON numbers hold here; send it as a string$/ },
  { name: 'a whole number beyond 2^53', args: () => ['enqueue', '--payload', '[9007199254740993]', '--database-url', db.url], code: 2, stderr: /^jobq: --payload cannot be stored as given: the whole number 9007199254740993 is beyond 2\^53 and would lose precision; send it as a string$/ },
  {
    name: 'a --stdin line that is not UTF-8',
    args: () => ['enqueue', '--stdin', '--database-url', db.url],
    input: Buffer.concat([Buffer.from('{"kind": "k"}\n{"kind": "k", "payload": "'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]),
    code: 2,
    stderr: /^jobq: line 2: bytes that are not UTF-8; send UTF-8 text; nothing was queued; nothing from line 1 on was written$/,
  },
  { name: 'a malformed %-escape in the URL', args: () => ['stats', '--database-url', 'mysql://root:50%zz@127.0.0.1:3306/jobq'], code: 2, stderr: /^jobq: invalid database URL "mysql:\/\/root:\*\*\*@127\.0\.0\.1:3306\/jobq": the password has a malformed %-escape/ },
  { name: 'port 0 in the URL', args: () => ['stats', '--database-url', 'mysql://root@127.0.0.1:0/jobq'], code: 2, stderr: /^jobq: invalid database URL .*: port 0 is no port a server listens on/ },
  { name: 'a handler path that does not exist', args: () => ['work', '--handler', './no/such/handler.js', '--database-url', db.url], code: 2, stderr: /^jobq: cannot load handler "\.\/no\/such\/handler\.js": no such file \(.*\)$/ },
  { name: 'a handler without a function export', args: () => ['work', '--handler', HANDLERS + 'not-a-handler.cjs', '--database-url', db.url], code: 2, stderr: /^jobq: handler ".*not-a-handler\.cjs" must export default async \(job\) => \.\.\., or an object of such functions by kind/ },
  { name: 'a --kind the handler map lacks', args: () => ['work', '--handler', HANDLERS + 'email-handlers.mjs', '--kind', 'sms', '--database-url', db.url], code: 2, stderr: /^jobq: the handler module has no handler for kind "sms"; it handles email$/ },
  { name: 'a fractional light-claim pause', args: () => ['work', '--handler', HANDLERS + 'email-handlers.mjs', '--light-claim-pause-ms', '0.5', '--database-url', db.url], code: 2, stderr: /^error: option '--light-claim-pause-ms <ms>' argument '0\.5' is invalid\. expected a whole number from 0 to 1000/ },
  { name: 'a zero concurrency', args: () => ['work', '--handler', HANDLERS + 'email-handlers.mjs', '--concurrency', '0', '--database-url', db.url], code: 2, stderr: /^error: option '--concurrency <n>' argument '0' is invalid\. expected a whole number from 1 to 10000/ },
  { name: 'a priority out of range', args: () => ['enqueue', '--kind', 'k', '--priority', '40000', '--database-url', db.url], code: 2, stderr: /^error: option '--priority <n>' argument '40000' is invalid\. expected a whole number from -32768 to 32767/ },
  { name: 'a fractional priority', args: () => ['enqueue', '--kind', 'k', '--priority', '1.5', '--database-url', db.url], code: 2, stderr: /^error: option '--priority <n>' argument '1\.5' is invalid/ },
  {
    name: 'a misspelt field on a --stdin line',
    args: () => ['enqueue', '--stdin', '--database-url', db.url],
    input: '{"kind": "k"}\n{"kind": "k", "delya": 60}\n',
    code: 2,
    stderr: /^jobq: line 2: unknown field "delya"; a line may have "kind", "payload", "delay", "priority", "key", "group", "timeout", "unique"; nothing was queued; nothing from line 1 on was written$/,
  },
  {
    name: 'a bad priority on a --stdin line',
    args: () => ['enqueue', '--stdin', '--database-url', db.url],
    input: '{"kind": "k", "priority": "high"}\n',
    code: 2,
    stderr: /^jobq: line 1: priority must be a whole number from -32768 to 32767 \(smaller runs first\), not "high"; nothing was queued/,
  },
  { name: 'a job id that is not a number', args: () => ['cancel', '--ids', '12', 'abc', '--database-url', db.url], code: 2, stderr: /^error: option '--ids <id\.\.\.>' argument 'abc' is invalid\. expected a whole number from 1 to \d+, got "abc"\./ },
  { name: 'cancel without --ids', args: () => ['cancel', '--database-url', db.url], code: 2, stderr: /^error: required option '--ids <id\.\.\.>' not specified/ },
  { name: 'work without --handler', args: () => ['work', '--database-url', db.url], code: 2, stderr: /^error: required option '--handler <file>' not specified/ },
];

refusedCleanly(db, refusals);

test('help read by a reader that stops early (jobq enqueue --help | head -1): the first line, exit 0, no stack trace', async () => {
  const jobq = fileURLToPath(new URL('../../bin/jobq.js', import.meta.url));
  // Many commands' help in a row, so that the output outlasts the pipe's reader.
  const helps = ['enqueue', 'work', 'start-processing', 'setup-tables', 'prune'].map((command) => `"${process.execPath}" "${jobq}" ${command} --help`).join('; ');
  const { stdout, stderr } = await promisify(execFile)('bash', ['-o', 'pipefail', '-c', `{ ${helps}; } | head -1`]);
  assert.equal(stdout, 'Usage: jobq enqueue [options]\n');
  assert.equal(stderr, '');
});
