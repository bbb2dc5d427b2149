import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';

/**
 * An earlier jobq, built from git into a temporary folder, to measure against in the same run:
 * the machine is too noisy for figures from another day. Uses this checkout's node_modules.
 */
export function buildBaseline(ref: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(os.tmpdir(), 'jobq-baseline-'));
  execSync(`git archive ${ref} | tar -x -C ${dir}`, { stdio: ['ignore', 'ignore', 'inherit'] });
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  execSync(`${process.execPath} ${resolve('node_modules/typescript/bin/tsc')} -p tsconfig.json`, { cwd: dir, stdio: 'inherit' });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
