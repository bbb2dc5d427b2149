import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { JobQueue } from '../../job-queue.js';
import type { QueueStats } from '../../queue/types.js';
import { addConnectionOptions, numberIn, type ConnectionOptions } from '../options.js';
import { LineWriter, statsJson, statsLines } from '../output.js';

interface StatsOptions extends ConnectionOptions {
  json?: boolean;
  watch?: number;
  recount?: boolean;
}

export function registerStats(program: Command): void {
  addConnectionOptions(program.command('stats'))
    .description('count jobs per status and kind, the age of the oldest unclaimed job, claims per owner, throughput, the server')
    .option('--json', 'print one JSON object (with --watch: one per line)')
    .option('--watch <seconds>', 'redraw every N seconds until Ctrl-C', numberIn(0.1, 86_400, false))
    .option('--recount', 'first count the waiting, done and failed jobs again (jobq keeps those counts; needed only after rows were changed by hand)')
    .addHelpText(
      'after',
      `
Examples:
  jobq stats
  jobq stats --json | jq .counts.unclaimed
  jobq stats --watch 2
  jobq stats --recount`,
    )
    .action(async (options: StatsOptions) => {
      const interrupted = new AbortController();
      const stop = () => interrupted.abort();
      const out = new LineWriter(process.stdout, stop);
      const queue = await JobQueue.open({ url: options.databaseUrl, table: options.table, reconnect: options.watch !== undefined });
      try {
        await queue.assertReady();
        if (options.recount) await queue.recount();
        const { host, port, database } = queue.location;
        const redraw = process.stdout.isTTY === true;
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        const server = await queue.serverInfo();
        let previous: { at: number; stats: QueueStats } | undefined;
        do {
          const stats = await queue.stats();
          const at = performance.now();
          const completedPerSecond = previous === undefined ? null : completedRate(previous.stats, stats, (at - previous.at) / 1000);
          previous = { at, stats };
          if (options.json) {
            out.line(JSON.stringify(statsJson(stats, database, { server, completedPerSecond })));
            continue;
          }
          const lines = statsLines(stats, { where: `${database} at ${host}:${port}`, server, completedPerSecond });
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

/**
 * Jobs completed (deleted, or marked done) per second between two readings: the ids handed out
 * meanwhile, less the growth of the jobs still there and not done. An estimate: ids skipped by
 * the server (re-sent inserts) count as completed.
 */
function completedRate(before: QueueStats, after: QueueStats, seconds: number): number {
  const active = (stats: QueueStats) => stats.counts.unclaimed + stats.counts.scheduled + stats.counts.claimed + stats.counts.failed;
  const inserted = after.maxId - before.maxId;
  return seconds > 0 ? Math.max(0, inserted - (active(after) - active(before))) / seconds : 0;
}
