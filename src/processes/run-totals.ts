import type { ChildMessage } from './messages.js';

/** What the summary needs of what happened during a run. */
export interface RunCounts {
  generated: number;
  consumed: number;
  /** Jobs a consumer processed but no longer owned when it came to delete them. */
  lost: number;
  claims: number;
  emptyClaims: number;
  failed: number;
  /** Handler failures that were sent back to the queue for another attempt. */
  retried: number;
  deadlocks: number;
  lockWaits: number;
}

/**
 * Adds up what the workers report. Counts travel per event, so a worker killed with -9 loses none
 * it had already sent. Also keeps the consuming window: first claim to last settle.
 */
export class RunTotals {
  readonly counts: RunCounts = { generated: 0, consumed: 0, lost: 0, claims: 0, emptyClaims: 0, failed: 0, retried: 0, deadlocks: 0, lockWaits: 0 };
  private firstClaimAt: number | undefined;
  private lastSettleAt: number | undefined;

  /** Seconds from the first claim to the last delete: the consuming window, without start-up. */
  get consumingSeconds(): number {
    return this.firstClaimAt === undefined || this.lastSettleAt === undefined ? 0 : (this.lastSettleAt - this.firstClaimAt) / 1000;
  }

  add(message: ChildMessage): void {
    const { counts } = this;
    switch (message.type) {
      case 'inserted':
        counts.generated += message.count;
        break;
      case 'cycle':
        counts.consumed += message.settled;
        counts.lost += message.lost;
        if (message.settled + message.lost > 0) this.lastSettleAt = Date.now();
        if (message.claimed > 0 || message.failedIds.length > 0) {
          this.firstClaimAt ??= Date.now();
          counts.claims++;
        } else if (message.candidates > 0) {
          counts.claims++;
          counts.emptyClaims++;
        }
        counts.failed += message.failedIds.length;
        break;
      case 'worked':
        counts.consumed += message.counters.completed;
        counts.claims += message.counters.claims;
        counts.emptyClaims += message.counters.emptyClaims;
        counts.deadlocks += message.counters.deadlocks;
        counts.lockWaits += message.counters.lockWaits;
        if (message.counters.completed > 0) {
          this.firstClaimAt ??= Date.now();
          this.lastSettleAt = Date.now();
        }
        break;
      case 'job-failed':
        if (message.final) counts.failed++;
        else counts.retried++;
        break;
      case 'retries':
        counts.deadlocks += message.deadlocks;
        counts.lockWaits += message.lockWaits;
        break;
      default:
        break;
    }
  }
}
