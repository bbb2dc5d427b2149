import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeConnectError, isConnectionLost, isRetryableLockError } from '../../src/db/server-errors.js';
import { JobqError } from '../../src/errors.js';

// Pure classification of the driver's errors, no server: which ones run a transaction again and
// which ones replace the connection. The cluster tests show the servers really send them.

const serverError = (errno: number, message = '') => Object.assign(new Error(message), { errno });

test('deadlocks, lock wait timeouts and lost certification (Galera 1213; Group Replication 3101, or 1180 carrying error 149) run the transaction again', () => {
  for (const errno of [1213, 1205, 3101]) assert.equal(isRetryableLockError(serverError(errno)), true, String(errno));
  assert.equal(isRetryableLockError(serverError(1180, "Got error 149 - 'Lock deadlock; Retry transaction' during COMMIT")), true);
  assert.equal(isRetryableLockError(serverError(1180, "Got error 28 - 'No space left on device' during COMMIT")), false, 'another failed COMMIT is no conflict');
  assert.equal(isRetryableLockError(serverError(1062)), false);
});

test('a member that cannot take writes (1290 read-only, 3100 out of the group) or a Galera node not ready (1047, or 1180 out of the Primary component) replaces the connection', () => {
  for (const errno of [1290, 3100, 1047]) assert.equal(isConnectionLost(serverError(errno)), true, String(errno));
  const outOfPrimary = 'Error while appending streaming replication fragment(provider status: Not connected to Primary Component)';
  assert.equal(isConnectionLost(serverError(1180, outOfPrimary)), true, 'a COMMIT refused out of the Primary component');
  assert.equal(isConnectionLost(serverError(1180, "Got error 28 - 'No space left on device' during COMMIT")), false, 'another failed COMMIT');
  for (const errno of [1062, 1146, 3101]) assert.equal(isConnectionLost(serverError(errno)), false, String(errno));
});

test('a refused login (1045, or 1698 as MariaDB sometimes sends it) is one line about the user, and no reconnect', () => {
  const settings = { servers: [{ host: '127.0.0.1', port: 3306 }], user: 'ann', password: 'secret', database: 'jobq' };
  for (const code of ['ER_ACCESS_DENIED_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR']) {
    const refused = Object.assign(new Error("Access denied for user 'ann'@'127.0.0.1'"), { code, fatal: true });
    assert.equal(isConnectionLost(refused), false, code);
    const described = describeConnectError(refused, settings, { host: '127.0.0.1', port: 3306 });
    assert.ok(described instanceof JobqError, code);
    assert.equal(described.message, 'access denied for user "ann" at 127.0.0.1:3306; check the user and password in --database-url');
  }
});
