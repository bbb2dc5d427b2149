import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDatabaseUrl, redactPassword, startingWithServer } from '../../src/config/database-url.js';
import { JobqError } from '../../src/errors.js';

// Database URLs, no server: what a URL means, how a list of servers is turned, what a message shows.

test('a URL gives its server, user, password and database; port 3306 and user root when left out', () => {
  assert.deepEqual(parseDatabaseUrl('mysql://jobq:s3cret@db.example:3310/queue'), {
    servers: [{ host: 'db.example', port: 3310 }],
    user: 'jobq',
    password: 's3cret',
    database: 'queue',
  });
  assert.deepEqual(parseDatabaseUrl('mariadb://db.example/queue'), { servers: [{ host: 'db.example', port: 3306 }], user: 'root', password: '', database: 'queue' });
});

test('several servers, in order; a password may hold a literal @ and %-escapes', () => {
  const settings = parseDatabaseUrl('mysql://root:p@ss%2Fw0rd@10.0.0.1:3306,10.0.0.2,[::1]:3307/jobq');
  assert.deepEqual(settings.servers, [
    { host: '10.0.0.1', port: 3306 },
    { host: '10.0.0.2', port: 3306 },
    { host: '::1', port: 3307 },
  ]);
  assert.equal(settings.password, 'p@ss/w0rd');
});

test('process i of a run starts with server i of the list, the others after it', () => {
  const url = 'mysql://root@a:1,b:2,c:3/jobq';
  assert.equal(startingWithServer(url, 0), url);
  assert.equal(startingWithServer(url, 1), 'mysql://root@b:2,c:3,a:1/jobq');
  assert.equal(startingWithServer(url, 5), 'mysql://root@c:3,a:1,b:2/jobq');
  assert.equal(startingWithServer('mysql://root@a:1/jobq', 3), 'mysql://root@a:1/jobq');
});

test('messages never show the password, all of it up to the last @', () => {
  assert.equal(redactPassword('mysql://jobq:p@ss-w0rd@db:3306/jobq'), 'mysql://jobq:***@db:3306/jobq');
  assert.equal(redactPassword('mysql://jobq@db/jobq'), 'mysql://jobq@db/jobq');
});

test('a malformed URL is a usage error naming what is wrong', () => {
  const refused = (text: string, why: RegExp) =>
    assert.throws(() => parseDatabaseUrl(text), (error: unknown) => error instanceof JobqError && error.exitCode === 2 && why.test(error.message), text);
  refused('localhost:3306/jobq', /scheme must be mysql:, not localhost:/);
  refused('mysql://root@db', /no database name after the host/);
  refused('mysql://root@db:0/jobq', /port 0 is no port a server listens on/);
  refused('mysql://root:50%zz@db/jobq', /the password has a malformed %-escape/);
  refused('mysql://root@a:1,bad host/jobq', /"bad host" is not a host\[:port\]/);
  refused('mysql://root@db/bad-name!', /database/);
});
