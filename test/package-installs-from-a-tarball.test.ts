import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, lstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { README_EXAMPLE_OUTPUT } from './helpers/readme-example.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

// The package as a user gets it: packed with `npm pack`, installed from the tarball into a folder
// of its own with its runtime dependencies only (no link to this checkout, no dev dependencies).

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let db: TestDatabase;
let dir: string;
let packed: string[];

before(async () => {
  db = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), 'jobq-install-'));
  // --ignore-scripts: `prepare` would rebuild dist/ under the running suite; npm test has built it.
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT });
  const [tarball] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packed = tarball!.files.map((file) => file.path);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'a-consumer', private: true, type: 'module' }));
  await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', '--no-package-lock', join(dir, tarball!.filename)], { cwd: dir });
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await db.drop();
});

test('the tarball holds the built library, its types, the command, the README and the docs it links to; no tests, benchmarks, images or source maps', () => {
  for (const file of ['package.json', 'README.md', 'docs/library.md', 'bin/jobq.js', 'dist/src/index.js', 'dist/src/index.d.ts', 'public/dashboard.js']) {
    assert.ok(packed.includes(file), `${file} is in the tarball`);
  }
  const unwanted = packed.filter((file) => /^(test|dist\/test|dist\/scripts|scripts|bench-results|examples)\/|\.(map|png|svg)$|\.ts$(?<!\.d\.ts)/.test(file));
  assert.deepEqual(unwanted, []);
});

test('installed from the tarball: the README example runs as written and `npx jobq --help` answers', async () => {
  assert.ok(!lstatSync(join(dir, 'node_modules', 'jobq-mysql')).isSymbolicLink(), 'a real copy, not a link to the checkout');
  copyFileSync(join(ROOT, 'examples', 'readme-example.mjs'), join(dir, 'example.mjs'));
  const example = await run(process.execPath, ['example.mjs'], { cwd: dir, env: { ...process.env, JOBQ_DATABASE_URL: `${db.url}_installed` } });
  await db.admin.query(`DROP DATABASE IF EXISTS \`${db.name}_installed\``);
  assert.equal(example.stdout, README_EXAMPLE_OUTPUT);
  const help = await run('npx', ['--no-install', 'jobq', '--help'], { cwd: dir });
  assert.match(help.stdout, /^Usage: jobq \[options\] \[command\]/);
});

test('a TypeScript consumer with "module": "nodenext" compiles against the shipped types, typed kinds included', async () => {
  writeFileSync(
    join(dir, 'consumer.ts'),
    [
      "import { JobQueue } from 'jobq-mysql';",
      'type Tasks = { email: { to: string } };',
      'export async function send(queue: JobQueue<Tasks>): Promise<void> {',
      "  await queue.enqueue({ kind: 'email', payload: { to: 'ann@example.com' } });",
      '  // @ts-expect-error a number where the email address is a string',
      "  await queue.enqueue({ kind: 'email', payload: { to: 42 } });",
      '  queue.work({ email: async (job) => job.payload.to.toUpperCase() });',
      '}',
      '',
    ].join('\n'),
  );
  const compilerOptions = { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')] };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await run(process.execPath, [tsc, '-p', dir]).catch((error: { stdout: string; stderr: string }) => ({ output: error.stdout + error.stderr, failed: true }));
  assert.ok(!('failed' in result), `tsc:\n${'output' in result ? result.output : ''}`);
});

test('a CommonJS consumer require()s the package', async () => {
  writeFileSync(join(dir, 'consumer.cjs'), "const { JobQueue, JobqError } = require('jobq-mysql');\nconsole.log(typeof JobQueue.open, typeof JobqError);\n");
  const { stdout } = await run(process.execPath, ['consumer.cjs'], { cwd: dir });
  assert.equal(stdout, 'function function\n');
});
