import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command, Option } from 'commander';
import { buildProgram } from '../../src/cli/main.js';

// docs/cli.md against the program itself (what `--help` prints), with no server: every command
// has its section, every flag is documented there (the connection flags under "Configuration"),
// every flag a section's table names exists, and the defaults the tables give are the program's.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const reference = readFileSync(path.join(root, 'docs/cli.md'), 'utf8');

/** The text under each `### \`jobq ...\`` heading, by the command names the heading shows. */
const sections = reference.split(/^(?=#{2,3} )/m).filter((part) => part.startsWith('### `jobq '));
const sectionOf = (name: string) => sections.find((section) => new RegExp(`^### .*\`jobq ${name}\\b`).test(section));
const configuration = reference.split(/^(?=## )/m).find((part) => part.startsWith('## Configuration')) ?? '';

/** Every command of the program, subcommands included, as ['schedule add', command]. */
function commandsOf(command: Command, prefix = ''): Array<[string, Command]> {
  return command.commands.flatMap((sub) => {
    const name = `${prefix}${sub.name()}`;
    return sub.commands.length > 0 ? commandsOf(sub, `${name} `) : [[name, sub] as [string, Command]];
  });
}

const program = buildProgram();
const commands = commandsOf(program);
const visible = (command: Command) => command.options.filter((option) => !(option as Option & { hidden: boolean }).hidden);

/** The section of a command: its own, or its parent's (`schedule add` is under `jobq schedule add ... / list / remove`). */
const documented = (name: string) => sectionOf(name) ?? sectionOf(name.split(' ')[0]!);

/** The cells of a table row; `\|` inside a cell is a literal bar. */
const cells = (row: string) => row.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim());

/** A table row of the section for a flag: `| \`-c, --consumers N\` | 10 | ... |`. */
const rowOf = (section: string, flag: string) => section.split('\n').find((line) => line.startsWith('|') && new RegExp(`\`[^\`]*${flag}\\b`).test(cells(line)[0] ?? ''));

test('every command has a section in docs/cli.md', () => {
  assert.ok(commands.length >= 12, commands.map(([name]) => name).join(', '));
  assert.deepEqual(commands.filter(([name]) => documented(name) === undefined).map(([name]) => name), []);
});

test('every flag of every command is in its section, or under Configuration', () => {
  const missing = commands.flatMap(([name, command]) =>
    visible(command)
      .filter((option) => option.long !== undefined && !documented(name)!.includes(option.long) && !configuration.includes(option.long))
      .map((option) => `jobq ${name} ${option.long}`),
  );
  assert.deepEqual(missing, []);
});

test("every flag a section's table names is a flag of that command", () => {
  const unknown = commands.flatMap(([name, command]) => {
    const flags = new Set(command.options.map((option) => option.long));
    const rows = documented(name)!.split('\n').filter((line) => /^\| `-/.test(line));
    return rows.flatMap((row) => [...cells(row)[0]!.matchAll(/--[a-z-]+/g)].map((match) => match[0]).filter((flag) => !flags.has(flag)).map((flag) => `jobq ${name} ${flag}`));
  });
  // A section may document its siblings' flags (pause and resume share one): only flags no command of the section has are wrong.
  const anyCommandHas = (entry: string) => commands.some(([name, command]) => entry.startsWith(`jobq ${name.split(' ')[0]}`) && command.options.some((option) => entry.endsWith(` ${option.long}`)));
  assert.deepEqual(unknown.filter((entry) => !anyCommandHas(entry)), []);
});

test("the defaults in the tables are the program's", () => {
  const wrong = commands.flatMap(([name, command]) =>
    visible(command).flatMap((option) => {
      const row = option.long === undefined ? undefined : rowOf(documented(name)!, option.long);
      if (row === undefined || option.defaultValue === undefined) return [];
      const cell = cells(row)[1]!;
      const expected = option.defaultValue === false ? 'off' : String(option.defaultValue);
      return cell.split(/,\s*/).some((value) => value.replaceAll('`', '') === expected) ? [] : [`jobq ${name} ${option.long}: docs say ${cell}, the program ${expected}`];
    }),
  );
  assert.deepEqual(wrong, []);
});
