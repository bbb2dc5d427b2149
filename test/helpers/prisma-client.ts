import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';

const run = promisify(execFile);
const EXAMPLES = fileURLToPath(new URL('../../../examples/', import.meta.url));
const PRISMA = fileURLToPath(new URL('../../../node_modules/prisma/build/index.js', import.meta.url));
const TEST_DIR = fileURLToPath(new URL('../', import.meta.url));

/** examples/with-prisma.mjs with its generated client, in a folder of this process. */
export interface PrismaExample {
  /** The example, ready to run. */
  example: string;
  /** The generated client's module (PrismaClient). */
  client: string;
  remove(): void;
}

/**
 * Copies examples/with-prisma.mjs and its schema into a folder of this process under dist/test/
 * (inside the package, where the example finds @prisma/client and jobq-mysql), runs `prisma
 * generate` there as the example says, and compiles the generated TypeScript to JavaScript.
 * `prisma generate` does not use the schema engine (migrations do), but would download it from
 * binaries.prisma.sh, which this machine cannot reach: the variable points it at a program that
 * is never run.
 */
export async function preparePrismaExample(): Promise<PrismaExample> {
  const dir = mkdtempSync(`${TEST_DIR}prisma-`);
  cpSync(`${EXAMPLES}with-prisma.mjs`, `${dir}/with-prisma.mjs`);
  cpSync(`${EXAMPLES}prisma/schema.prisma`, `${dir}/prisma/schema.prisma`);
  await run(process.execPath, [PRISMA, 'generate', '--schema', `${dir}/prisma/schema.prisma`], {
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true', PRISMA_HIDE_UPDATE_MESSAGE: '1' },
  });
  const generated = `${dir}/prisma/generated`;
  for (const file of filesIn(generated).filter((name) => name.endsWith('.ts'))) {
    const output = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    writeFileSync(file.replace(/\.ts$/, '.js'), output);
  }
  writeFileSync(`${generated}/package.json`, '{ "type": "module" }\n');
  return { example: `${dir}/with-prisma.mjs`, client: `${generated}/client.js`, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

function filesIn(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => (statSync(`${dir}/${name}`).isDirectory() ? filesIn(`${dir}/${name}`) : [`${dir}/${name}`]));
}
