import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The architecture as the imports show it, read from src/ with no server: no import cycle, each
// folder imports only the layers below it, and the core knows nothing of the article's demo.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const src = path.join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : [],
  );
}

/** Every file of src/ (relative, without .ts) and the src/ files it imports, type-only imports included. */
const imports = new Map(
  sourceFiles(src).map((file) => {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/^(?:import|export)\b[^;]*?from\s+'(\.{1,2}\/[^']+)\.js'/gms)].map((match) => match[1]!);
    const name = (to: string) => path.relative(src, path.resolve(path.dirname(file), to));
    return [name(file.replace(/\.ts$/, '')), specifiers.map(name)] as const;
  }),
);

/** The folder of a file: its first directory under src/ ('' for src/ itself). */
const folder = (file: string) => (file.includes(path.sep) ? file.split(path.sep)[0]! : '');

// Who may import whom, from the bottom up. The root ('') holds errors.ts (everyone's), the facade
// job-queue.ts and index.ts. The supervisor of child processes sits on the facade; the article's
// generators and consumers are children of it.
const MAY_IMPORT: Record<string, readonly string[]> = {
  config: [],
  tracing: ['config'],
  db: ['config'],
  claim: ['config', 'db'],
  'wake-ups': ['config', 'db'],
  queue: ['config', 'db', 'claim', 'tracing'],
  worker: ['config', 'db', 'claim', 'queue', 'tracing', 'wake-ups'],
  dashboard: ['config', 'db', 'claim', 'queue', 'worker', ''],
  processes: ['config', 'db', 'claim', 'queue', 'worker', 'dashboard', ''],
  demo: ['config', 'db', 'claim', 'queue', 'processes'],
  cli: ['config', 'db', 'claim', 'queue', 'worker', 'dashboard', 'processes', 'demo', ''],
};

test('src/ has the files this test reads', () => {
  assert.ok(imports.has('job-queue') && imports.has(path.join('claim', 'turn')), [...imports.keys()].join(', '));
});

test('no import cycle anywhere in src/', () => {
  const state = new Map<string, 'visiting' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, trail: string[]) => {
    state.set(file, 'visiting');
    for (const next of imports.get(file) ?? []) {
      if (state.get(next) === 'visiting') cycles.push([...trail, file, next].slice(trail.indexOf(next) >= 0 ? trail.indexOf(next) : trail.length).join(' > '));
      else if (!state.has(next)) visit(next, [...trail, file]);
    }
    state.set(file, 'done');
  };
  for (const file of imports.keys()) if (!state.has(file)) visit(file, []);
  assert.deepEqual(cycles, []);
});

test('each layer imports only the layers below it', () => {
  const wrong: string[] = [];
  for (const [file, targets] of imports) {
    const allowed = MAY_IMPORT[folder(file)];
    if (allowed === undefined) continue;
    for (const target of targets) {
      const to = folder(target);
      const isShared = to === '' && target === 'errors';
      if (to !== folder(file) && !isShared && !allowed.includes(to)) wrong.push(`${file} imports ${target}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the claim engine, the queue, the worker and the supervisor import nothing of the demo', () => {
  const demo = [...imports].flatMap(([file, targets]) => (['claim', 'queue', 'worker', 'processes', ''].includes(folder(file)) ? targets.filter((t) => folder(t) === 'demo').map((t) => `${file} imports ${t}`) : []));
  assert.deepEqual(demo, []);
});
