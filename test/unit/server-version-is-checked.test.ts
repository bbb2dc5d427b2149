import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertServerSupported, parseServerVersion } from '../../src/db/server-version.js';
import { ExitCode, JobqError } from '../../src/errors.js';

const accepts = (text: string) => assert.doesNotThrow(() => assertServerSupported(parseServerVersion(text)), text);
const refuses = (text: string, message: string) =>
  assert.throws(
    () => assertServerSupported(parseServerVersion(text)),
    (error: unknown) => error instanceof JobqError && error.exitCode === ExitCode.unsupportedServer && error.message === message,
  );

test('servers with SKIP LOCKED (and, on MySQL, utf8mb4_0900_bin) are accepted', () => {
  for (const text of ['8.0.17', '8.0.36', '8.4.0', '9.1.0', '10.6.0-MariaDB', '10.11.19-MariaDB-0+deb12u1', '11.4.2-MariaDB-log']) accepts(text);
});

test('servers without SKIP LOCKED are refused with one line naming server and version', () => {
  const mysql = 'or newer, for SELECT ... FOR UPDATE SKIP LOCKED and the utf8mb4_0900_bin collation';
  refuses('5.7.44-log', `MySQL 5.7.44-log is too old: jobq needs MySQL 8.0.17 ${mysql}`);
  refuses('8.0.0-dmr', `MySQL 8.0.0-dmr is too old: jobq needs MySQL 8.0.17 ${mysql}`);
  refuses('8.0.16', `MySQL 8.0.16 is too old: jobq needs MySQL 8.0.17 ${mysql}`);
  refuses('10.5.23-MariaDB', 'MariaDB 10.5.23-MariaDB is too old: jobq needs MariaDB 10.6.0 or newer, for SELECT ... FOR UPDATE SKIP LOCKED');
  refuses('5.5.5-10.3.39-MariaDB', 'MariaDB 5.5.5-10.3.39-MariaDB is too old: jobq needs MariaDB 10.6.0 or newer, for SELECT ... FOR UPDATE SKIP LOCKED');
});
