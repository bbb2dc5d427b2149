import { Option, type Command } from 'commander';
import { DEFAULTS, MAX_LANES } from '../../config/defaults.js';
import { JobQueue } from '../../job-queue.js';
import type { PartitionMethod } from '../../queue/sql/partitions.js';
import { describeLayout, MAX_PARTITIONS } from '../../queue/table-layout.js';
import { addConnectionOptions, numberIn, type ConnectionOptions } from '../options.js';
import { ProgressLine } from '../progress.js';
import { LineWriter } from '../output.js';

interface SetupTablesOptions extends ConnectionOptions {
  recreate?: boolean;
  force?: boolean;
  lanes?: number;
  partitions?: number;
  partitionBy?: PartitionMethod;
}

export function registerSetupTables(program: Command): void {
  addConnectionOptions(program.command('setup-tables'))
    .description('create the database and the jobs table if missing, or migrate the table (rows are kept)')
    .option('--recreate', "drop and create the table (the article's setup); refused if it holds rows")
    .option('--force', 'with --recreate: drop the rows too')
    .addOption(new Option('--lanes <n>', `claim turns that may run at once, for all workers together (default ${DEFAULTS.lanes} on a new table)`).argParser(numberIn(1, MAX_LANES)))
    .addOption(new Option('--partitions <n>', `partition the table on id into n partitions (2-${MAX_PARTITIONS}; 0 undoes it); rows are kept, the table is copied`).argParser(numberIn(0, MAX_PARTITIONS)))
    .addOption(new Option('--partition-by <method>', 'with --partitions: HASH (id MOD n) or KEY (the server\'s hash of id)').choices(['hash', 'key']).default('hash'))
    .addHelpText(
      'after',
      `
Examples:
  jobq setup-tables                          create database jobq and table jobs (harmless to repeat)
  jobq setup-tables --table emails           another queue beside it
  jobq setup-tables --recreate --force       start again from an empty table
  jobq setup-tables --lanes 8                let up to 8 claims run at once (a server with more cores)
  jobq setup-tables --partitions 8           partition the table on id (see docs/operations.md)
  jobq setup-tables --partitions 0           back to one unpartitioned table`,
    )
    .action(async (options: SetupTablesOptions) => {
      const out = new LineWriter();
      const queue = await JobQueue.open({ url: options.databaseUrl, table: options.table, createDatabase: true });
      const progress = new ProgressLine('setting up');
      try {
        const result = await queue.setup({
          recreate: options.recreate,
          force: options.force,
          ...(options.lanes !== undefined && { lanes: options.lanes }),
          ...(options.partitions !== undefined && { partitions: options.partitions, partitionBy: options.partitionBy }),
          ...(progress.shown && { onProgress: ({ step, fraction }) => progress.step(step, fraction) }),
        });
        progress.end();
        const { database } = queue.location;
        if (result.dropped > 0) out.line(`dropped table ${queue.table} with ${result.dropped} rows`);
        if (result.from === null) out.line(`created table ${queue.table} in database ${database} (schema ${result.to})`);
        else if (result.from < result.to) out.line(`migrated table ${queue.table} in database ${database} from schema ${result.from} to ${result.to}; rows kept`);
        else out.line(`table ${queue.table} in database ${database} is up to date (schema ${result.to})`);
        if (options.lanes !== undefined) out.line(`lanes: ${options.lanes}`);
        if (options.partitions !== undefined || result.layout.partitions > 0) out.line(`table ${queue.table}: ${describeLayout(result.layout)}`);
      } finally {
        progress.end();
        await queue.close();
      }
    });
}
