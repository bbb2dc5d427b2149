import { Option, type Command } from 'commander';
import { ExitCode, JobqError } from '../../errors.js';
import { ARTICLE_OPTIONS } from '../../config/options.js';
import { articleChildren, consumerTurns, type ArticleRun } from '../../demo/children.js';
import { CANDIDATE_PICKS, type CandidatePick } from '../../demo/demo-jobs.js';
import { addConnectionOptions, addReplicaOptions, numberIn, optionFor, type ConnectionOptions } from '../options.js';
import { runSupervised } from '../supervised-run.js';

interface StartProcessingOptions extends ConnectionOptions {
  generators: number;
  consumers: number;
  batchSize: number;
  commitEvery: number;
  jobs?: number;
  duration?: number;
  untilEmpty?: boolean;
  workMs: number;
  pick: CandidatePick;
  keepDone?: boolean;
  quiet?: boolean;
  lease: number;
}

export function registerStartProcessing(program: Command): void {
  addReplicaOptions(addConnectionOptions(program.command('start-processing')))
    .description('run generator and consumer processes against the jobs table until Ctrl-C')
    .addOption(optionFor(ARTICLE_OPTIONS.generators))
    .addOption(optionFor(ARTICLE_OPTIONS.consumers))
    .addOption(optionFor(ARTICLE_OPTIONS.batchSize))
    .addOption(optionFor(ARTICLE_OPTIONS.commitEvery))
    .addOption(new Option('--jobs <n>', 'generators stop after N jobs in total (default: unlimited)').argParser(numberIn(1, Number.MAX_SAFE_INTEGER)))
    .addOption(new Option('--duration <seconds>', 'stop everything gracefully after this long').argParser(numberIn(0.1, 31_536_000, false)))
    .option('--until-empty', 'stop once the generators are done and no unclaimed or claimed job is left')
    .addOption(optionFor(ARTICLE_OPTIONS.workMs))
    .addOption(new Option('--pick <how>', "candidates: the article's random first letter of d, or oldest first").choices(CANDIDATE_PICKS).default('random-prefix'))
    .option('--keep-done', 'mark processed jobs done instead of deleting them (debugging)')
    .option('-q, --quiet', 'no per-claim lines, only progress and the summary')
    .addOption(optionFor(ARTICLE_OPTIONS.leaseSeconds))
    .addHelpText(
      'after',
      `
Examples:
  jobq start-processing                                   2 generators, 10 consumers, until Ctrl-C
  jobq start-processing --duration 10                     the same for 10 seconds
  jobq start-processing -g 0 -c 10 --until-empty          drain what is queued, then exit
  jobq start-processing --jobs 5000 --until-empty -q      make 5000 jobs, consume them all, summary only

Ctrl-C (or SIGTERM) stops gracefully: generators commit, consumers finish the batch in hand.
A second Ctrl-C exits at once; leases give unfinished claims to the next run.`,
    )
    .action(async (options: StartProcessingOptions, command: Command) => {
      if (options.untilEmpty && options.consumers === 0) {
        throw new JobqError('--until-empty needs at least one consumer (--consumers 1 or more)', ExitCode.usage);
      }
      if (options.untilEmpty && options.generators > 0 && options.jobs === undefined && options.duration === undefined) {
        throw new JobqError('--until-empty with generators needs --jobs N (or --duration): unlimited generators never finish', ExitCode.usage);
      }
      const run: ArticleRun = {
        generators: options.generators,
        consumers: options.consumers,
        ...(options.jobs !== undefined && { jobs: options.jobs }),
        commitEvery: options.commitEvery,
        batchSize: options.batchSize,
        pick: options.pick,
        workMs: options.workMs,
        keepDone: options.keepDone ?? false,
        leaseSeconds: options.lease,
        quiet: options.quiet ?? false,
      };
      // A quiet drain prints nothing until its summary: a progress line (on a terminal) shows it going.
      const progress = run.quiet && run.generators === 0 && options.untilEmpty === true;
      process.exitCode = await runSupervised(
        options,
        (connection) => ({
          children: articleChildren(connection, run),
          claimTurns: consumerTurns(run.consumers),
          stop: { untilEmpty: options.untilEmpty ?? false, ...(options.duration !== undefined && { durationSeconds: options.duration }) },
        }),
        { progress, verbose: command.optsWithGlobals().verbose === true },
      );
    });
}
