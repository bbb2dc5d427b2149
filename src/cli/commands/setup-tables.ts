import type { Command } from 'commander';
import { JobQueue } from '../../queue/job-queue.js';
import { addConnectionOptions, type ConnectionOptions } from '../options.js';
import { LineWriter } from '../output.js';

interface SetupTablesOptions extends ConnectionOptions {
  recreate?: boolean;
  force?: boolean;
}

export function registerSetupTables(program: Command): void {
  addConnectionOptions(program.command('setup-tables'))
    .description('create the database and the jobs table if missing, or migrate the table (rows are kept)')
    .option('--recreate', "drop and create the table (the article's setup); refused if it holds rows")
    .option('--force', 'with --recreate: drop the rows too')
    .addHelpText(
      'after',
      `
Examples:
  jobq setup-tables                          create database jobq and table jobs (harmless to repeat)
  jobq setup-tables --table emails           another queue beside it
  jobq setup-tables --recreate --force       start again from an empty table`,
    )
    .action(async (options: SetupTablesOptions) => {
      const out = new LineWriter();
      const queue = await JobQueue.open({ url: options.databaseUrl, table: options.table, createDatabase: true });
      try {
        const result = await queue.setup({ recreate: options.recreate, force: options.force });
        const { database } = queue.location;
        if (result.dropped > 0) out.line(`dropped table ${queue.table} with ${result.dropped} rows`);
        if (result.from === null) out.line(`created table ${queue.table} in database ${database} (schema ${result.to})`);
        else if (result.from < result.to) out.line(`migrated table ${queue.table} in database ${database} from schema ${result.from} to ${result.to}; rows kept`);
        else out.line(`table ${queue.table} in database ${database} is up to date (schema ${result.to})`);
      } finally {
        await queue.close();
      }
    });
}
