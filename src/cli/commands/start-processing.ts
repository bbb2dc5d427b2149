import { Option, type Command } from 'commander';
import { ExitCode, JobqError } from '../../errors.js';
import { ARTICLE_BATCH_SIZE, DEFAULTS, LEASE_SECONDS_RANGE, MAX_BATCH_SIZE } from '../../queue/defaults.js';
import { CANDIDATE_PICKS, type CandidatePick } from '../../queue/types.js';
import { addConnectionOptions, addReplicaOptions, numberIn, type ConnectionOptions } from '../options.js';
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
    .addOption(new Option('-g, --generators <n>', 'generator processes (0: consume only)').argParser(numberIn(0, 64)).default(2))
    .addOption(new Option('-c, --consumers <n>', 'consumer processes (0: generate only)').argParser(numberIn(0, 64)).default(10))
    .addOption(new Option('-b, --batch-size <n>', 'most jobs one claim may take').argParser(numberIn(1, MAX_BATCH_SIZE)).default(ARTICLE_BATCH_SIZE))
    .addOption(new Option('--commit-every <n>', 'a generator commits after every N inserts').argParser(numberIn(1, 1000)).default(10))
    .addOption(new Option('--jobs <n>', 'generators stop after N jobs in total (default: unlimited)').argParser(numberIn(1, Number.MAX_SAFE_INTEGER)))
    .addOption(new Option('--duration <seconds>', 'stop everything gracefully after this long').argParser(numberIn(0.1, 31_536_000, false)))
    .option('--until-empty', 'stop once the generators are done and no unclaimed or claimed job is left')
    .addOption(new Option('--work-ms <ms>', 'simulated processing time per claimed batch').argParser(numberIn(0, 3_600_000)).default(0))
    .addOption(new Option('--pick <how>', "candidates: the article's random first letter of d, or oldest first").choices(CANDIDATE_PICKS).default('random-prefix'))
    .option('--keep-done', 'mark processed jobs done instead of deleting them (debugging)')
    .option('-q, --quiet', 'no per-claim lines, only progress and the summary')
    .addOption(new Option('--lease <seconds>', 'a claim holds its jobs this long; then they may be claimed again').argParser(numberIn(LEASE_SECONDS_RANGE.min, LEASE_SECONDS_RANGE.max, false)).default(DEFAULTS.leaseSeconds))
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
    .action(async (options: StartProcessingOptions) => {
      if (options.untilEmpty && options.consumers === 0) {
        throw new JobqError('--until-empty needs at least one consumer (--consumers 1 or more)', ExitCode.usage);
      }
      if (options.untilEmpty && options.generators > 0 && options.jobs === undefined && options.duration === undefined) {
        throw new JobqError('--until-empty with generators needs --jobs N (or --duration): unlimited generators never finish', ExitCode.usage);
      }
      process.exitCode = await runSupervised(options, {
        generators: options.generators,
        consumers: options.consumers,
        batchSize: options.batchSize,
        commitEvery: options.commitEvery,
        untilEmpty: options.untilEmpty ?? false,
        workMs: options.workMs,
        pick: options.pick,
        keepDone: options.keepDone ?? false,
        leaseSeconds: options.lease,
        quiet: options.quiet ?? false,
        ...(options.jobs !== undefined && { jobs: options.jobs }),
        ...(options.duration !== undefined && { durationSeconds: options.duration }),
      });
    });
}
