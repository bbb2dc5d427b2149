import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { JobQueue } from '../../queue/job-queue.js';
import { addConnectionOptions, numberIn, type ConnectionOptions } from '../options.js';
import { LineWriter, statsJson, statsLines } from '../output.js';

interface StatsOptions extends ConnectionOptions {
  json?: boolean;
  watch?: number;
}

export function registerStats(program: Command): void {
  addConnectionOptions(program.command('stats'))
    .description('count jobs per status, the age of the oldest unclaimed job and claimed jobs per owner')
    .option('--json', 'print one JSON object (with --watch: one per line)')
    .option('--watch <seconds>', 'redraw every N seconds until Ctrl-C', numberIn(0.1, 86_400, false))
    .addHelpText(
      'after',
      `
Examples:
  jobq stats
  jobq stats --json | jq .counts.unclaimed
  jobq stats --watch 2`,
    )
    .action(async (options: StatsOptions) => {
      const interrupted = new AbortController();
      const stop = () => interrupted.abort();
      const out = new LineWriter(process.stdout, stop);
      const queue = await JobQueue.open({ url: options.databaseUrl, table: options.table, reconnect: options.watch !== undefined });
      try {
        await queue.assertReady();
        const { host, port, database } = queue.location;
        const redraw = process.stdout.isTTY === true;
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        do {
          const stats = await queue.stats();
          if (options.json) {
            out.line(JSON.stringify(statsJson(stats, database)));
            continue;
          }
          const lines = statsLines(stats, `${database} at ${host}:${port}`);
          if (options.watch !== undefined) {
            // On a terminal redraw in place; into a pipe or file, append stamped blocks.
            if (redraw) process.stdout.write('\x1b[H\x1b[2J');
            else out.line(`-- ${new Date().toISOString()}`);
          }
          for (const line of lines) out.line(line);
        } while (options.watch !== undefined && (await sleep(options.watch * 1000, true, { signal: interrupted.signal }).catch(() => false)));
      } finally {
        process.removeListener('SIGINT', stop);
        process.removeListener('SIGTERM', stop);
        await queue.close();
      }
    });
}
