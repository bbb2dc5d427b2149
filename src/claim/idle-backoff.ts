import { DEFAULTS } from '../config/defaults.js';

// An idle consumer polls at 2, 4, 8 ... up to 20 ms (DEFAULTS.pollIntervalMs): ten idle consumers
// cost the server about 500 cheap index dives a second (the article's spun at 31,000), and new
// work is still seen within 20 ms. Any claim that finds work resets the wait.
const FIRST_WAIT_MS = 2;
// A consumer held back by a kind at its concurrency limit polls at 50, 100 ... up to 400 ms: the
// slot a job frees is its own worker's to take (the turn that settles the job claims into it, and
// wakes at once), so other workers' polls mostly find the kind full. Polling at the empty queue's
// pace cost the server 4.3 ms of CPU per job under a limit of 3, 61x the same backlog without
// it; this, 1.3 to 2 ms (bench-results/README.md, limits.json).
const FIRST_WAIT_AT_LIMIT_MS = 50;
const MAX_WAIT_AT_LIMIT_MS = 400;

/**
 * Why a claim loop waits before its next claim: `contended`, the candidates were others' this
 * time, so work exists; `busy`, another claim held a limit's row, and may leave room; `at-limit`,
 * the work there is waits for a concurrency limit; `filled`, the claim took the last slots of a
 * limit (its own jobs' ends wake the loop, which claims into the slots they free); `empty`, none.
 */
export type WaitReason = 'contended' | 'busy' | 'at-limit' | 'filled' | 'empty';

/** Capped exponential wait between polls of an empty queue, or of one whose work waits for a limit. */
export class IdleBackoff {
  private polls = 0;
  /** The last wait was at a limit, and no job of the loop's has ended since. */
  private heldAtLimit = false;

  /** `maxWaitMs`: the longest wait between two polls of an empty queue. */
  constructor(private readonly maxWaitMs: number = DEFAULTS.pollIntervalMs) {}

  reset(): void {
    this.polls = 0;
    this.heldAtLimit = false;
  }

  /** A turn settled jobs of the loop's: their slots are free, and a busy limit row may be hiding them from it. */
  freed(): void {
    this.heldAtLimit = false;
  }

  /**
   * How long to wait before the next poll: not at all after a contended claim, briefly after a
   * busy limit, unless the loop was held at a limit and has freed no slot since. Such a loop's
   * turns took the limit row from the turns that refill the slots they free (each refill then
   * waited 2 ms and tried again), and its own polls came every 2 ms while the row was busy.
   */
  next(why: WaitReason): number {
    if (why === 'contended') return 0;
    if (why === 'busy' && !this.heldAtLimit) return FIRST_WAIT_MS;
    if (why === 'filled') return MAX_WAIT_AT_LIMIT_MS;
    this.heldAtLimit = why !== 'empty';
    const [first, max] = this.heldAtLimit ? [FIRST_WAIT_AT_LIMIT_MS, MAX_WAIT_AT_LIMIT_MS] : [Math.min(FIRST_WAIT_MS, this.maxWaitMs), this.maxWaitMs];
    return Math.min(first * 2 ** this.polls++, max);
  }
}
