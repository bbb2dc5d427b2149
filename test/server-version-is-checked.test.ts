import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertSkipLockedSupported, parseServerVersion } from '../src/db/server-version.js';
import { ExitCode, JobqError } from '../src/errors.js';

const accepts = (text: string) => assert.doesNotThrow(() => assertSkipLockedSupported(parseServerVersion(text)), text);
const refuses = (text: string, message: string) =>
  assert.throws(
    () => assertSkipLockedSupported(parseServerVersion(text)),
    (error: unknown) => error instanceof JobqError && error.exitCode === ExitCode.unsupportedServer && error.message === message,
  );

test('servers with SKIP LOCKED are accepted', () => {
  for (const text of ['8.0.1', '8.0.36', '8.4.0', '9.1.0', '10.6.0-MariaDB', '10.11.19-MariaDB-0+deb12u1', '11.4.2-MariaDB-log']) accepts(text);
});

test('servers without SKIP LOCKED are refused with one line naming server and version', () => {
  refuses('5.7.44-log', 'MySQL 5.7.44-log has no SELECT ... FOR UPDATE SKIP LOCKED; jobq needs MySQL 8.0.1 or newer');
  refuses('8.0.0-dmr', 'MySQL 8.0.0-dmr has no SELECT ... FOR UPDATE SKIP LOCKED; jobq needs MySQL 8.0.1 or newer');
  refuses('10.5.23-MariaDB', 'MariaDB 10.5.23-MariaDB has no SELECT ... FOR UPDATE SKIP LOCKED; jobq needs MariaDB 10.6.0 or newer');
  refuses('5.5.5-10.3.39-MariaDB', 'MariaDB 5.5.5-10.3.39-MariaDB has no SELECT ... FOR UPDATE SKIP LOCKED; jobq needs MariaDB 10.6.0 or newer');
});
