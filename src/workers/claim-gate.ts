/**
 * Admission control for claim turns, held by the supervisor: at most `limit` consumers talk to the
 * server at once; the others process their batch or wait their turn.
 *
 * Why: on the 2-core bench machine (MariaDB 10.11, 100,000-200,000 queued jobs, batch 100) the
 * server spent 66 µs of CPU per job with one consumer and 160 µs with ten: ten connections on two
 * cores spend their time contending inside InnoDB, not claiming. Drains went 22,700 jobs/s with 2
 * consumers, 10,600 with 10 and 8,200 with 16. With the gate at the core count, ten and sixteen
 * consumers drain as fast as two, while their processing (--work-ms, handlers) still runs in
 * parallel.
 */
export class ClaimGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly holders = new Map<unknown, number>();

  constructor(private readonly limit: number) {}

  /** Calls `grant` once `holder` may start a turn (at once if a place is free). */
  acquire(holder: unknown, grant: () => void): void {
    const admit = () => {
      this.active++;
      this.holders.set(holder, (this.holders.get(holder) ?? 0) + 1);
      grant();
    };
    if (this.active < this.limit) admit();
    else this.waiting.push(admit);
  }

  /** Ends one turn of `holder`. */
  release(holder: unknown): void {
    const held = this.holders.get(holder) ?? 0;
    if (held === 0) return;
    if (held === 1) this.holders.delete(holder);
    else this.holders.set(holder, held - 1);
    this.active--;
    this.waiting.shift()?.();
  }

  /** Frees whatever a holder that died still held. */
  releaseAll(holder: unknown): void {
    while (this.holders.has(holder)) this.release(holder);
  }
}
