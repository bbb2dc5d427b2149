import type { Command } from 'commander';
import { addConnectionOptions, type ConnectionOptions } from '../options.js';
import { withReadyQueue } from '../ready-queue.js';

interface PauseOptions extends ConnectionOptions {
  kind: string;
}

/** `jobq pause --kind K` and `jobq resume --kind K`. */
export function registerPauseAndResume(program: Command): void {
  addConnectionOptions(program.command('pause'))
    .description('stop every worker of the queue from claiming jobs of a kind, until resumed')
    .requiredOption('--kind <kind>', 'the kind to hold')
    .addHelpText(
      'after',
      `
Examples:
  jobq pause --kind email      # the mail server is down: hold the email jobs
  jobq resume --kind email

Workers everywhere stop claiming the kind within about 100 ms; jobs they hold already finish. The pause is a row in the database: it holds for workers started
later and survives restarts. "jobq stats" lists the paused kinds.`,
    )
    .action((options: PauseOptions) => setPaused(options, true));

  addConnectionOptions(program.command('resume'))
    .description('let workers claim jobs of a paused kind again')
    .requiredOption('--kind <kind>', 'the kind to release')
    .addHelpText('after', '\nExample:\n  jobq resume --kind email')
    .action((options: PauseOptions) => setPaused(options, false));
}

async function setPaused(options: PauseOptions, pause: boolean): Promise<void> {
  await withReadyQueue(options, async (queue, out) => {
    if (pause) await queue.pause(options.kind);
    else await queue.resume(options.kind);
    const paused = await queue.pausedKinds();
    out.line(`${pause ? 'paused' : 'resumed'} kind ${JSON.stringify(options.kind)}; paused now: ${paused.length === 0 ? 'none' : paused.join(', ')}`);
  });
}
