import type { Lane } from './types.js';

/**
 * Admission control for claim turns, held by the supervisor: at most `turns` consumers talk to the
 * server at once, and each turn comes with a lane that no other turn holds meanwhile. The consumer
 * claims from that lane first, so no two claims in flight read the same candidates. Free lanes are
 * handed out in the order they were freed: every lane is visited in turn, also when fewer
 * consumers than lanes are waiting. There are as many lanes as turns, or more: one per partition
 * of a partitioned table, so that each turn reads one partition (sql/claim.ts, Lane).
 *
 * Measured with `npm run bench` (docs/performance.md, "The article's demo").
 *
 * Why a limit: on the 2-core bench machine (MariaDB 10.11, 100,000-200,000 queued jobs, batch 100)
 * the server spent 66 µs of CPU per job with one consumer and 160 µs with ten: ten connections on
 * two cores spend their time contending inside InnoDB, not claiming. Drains went 22,700 jobs/s with
 * 2 consumers, 10,600 with 10 and 8,200 with 16. With the gate at the core count, ten and sixteen
 * consumers drain as fast as two, while their processing (--work-ms, handlers) still runs in
 * parallel. Limits of 2 and 4 drained 5-10 % slower than cores + 1.
 *
 * Why lanes per turn, not per consumer: with a lane per consumer, a job waited for its own
 * consumer's next turn, which with ten consumers sharing three turns came every 41 ms (steady
 * state, 2 generators, 10 consumers): 27 ms median and 53 ms p95 from insert to claim. A lane per
 * turn is claimed from as often as any turn starts.
 *
 * Why the latest waiter goes first: a consumer that has just had a turn still has its code and
 * data in the CPU's caches; handing turns round all consumers in order made each one start cold.
 * Draining 200,000 jobs with 16 consumers: 22,500 jobs/s in order, 26,300 latest first, the same
 * as 2 consumers; Node's CPU per job halved. Nobody waits forever: a waiter older than
 * MAX_WAIT_MS goes first (with 50 ms or 200 ms most of the gain was lost, with 1 s none). A
 * consumer keeps renewing the lease of the batch it waits to settle, so a long wait costs no job
 * its lease.
 */
const MAX_WAIT_MS = 1000;

export class ClaimGate {
  private readonly freeLanes: number[];
  private readonly waiting: Array<{ since: number; admit: (lane: number) => void }> = [];
  private readonly held = new Map<unknown, number[]>();
  private inFlight = 0;

  constructor(
    readonly turns: number,
    readonly lanes = turns,
    private readonly now = () => performance.now(),
  ) {
    this.freeLanes = Array.from({ length: lanes }, (_, index) => index);
  }

  /** Calls `grant` with a lane once `holder` may start a turn (at once if a turn is free). */
  acquire(holder: unknown, grant: (lane: Lane) => void): void {
    const admit = (index: number) => {
      this.inFlight++;
      this.held.set(holder, [...(this.held.get(holder) ?? []), index]);
      grant({ index, count: this.lanes });
    };
    if (this.inFlight < this.turns) admit(this.freeLanes.shift()!);
    else this.waiting.push({ since: this.now(), admit });
  }

  /** Ends the oldest turn of `holder`. */
  release(holder: unknown): void {
    const lanes = this.held.get(holder);
    const index = lanes?.shift();
    if (index === undefined) return;
    if (lanes!.length === 0) this.held.delete(holder);
    this.inFlight--;
    this.freeLanes.push(index);
    const oldest = this.waiting[0];
    const next = oldest !== undefined && this.now() - oldest.since >= MAX_WAIT_MS ? this.waiting.shift() : this.waiting.pop();
    next?.admit(this.freeLanes.shift()!);
  }

  /** Frees whatever a holder that died still held. */
  releaseAll(holder: unknown): void {
    while (this.held.has(holder)) this.release(holder);
  }
}
