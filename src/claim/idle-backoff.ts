// An idle consumer polls at 2, 4, 8 ... up to 20 ms: ten idle consumers cost the server about 500
// cheap index dives a second (the article's spun at 31,000), and new work is still seen within
// 20 ms. Any claim that finds work resets the wait.
const FIRST_WAIT_MS = 2;
const MAX_WAIT_MS = 20;

/** Capped exponential wait between polls of an empty queue. */
export class IdleBackoff {
  private nextMs = FIRST_WAIT_MS;

  reset(): void {
    this.nextMs = FIRST_WAIT_MS;
  }

  /** How long to wait before the next poll: not at all after a contended claim. */
  next(contended: boolean): number {
    if (contended) return 0;
    const ms = this.nextMs;
    this.nextMs = Math.min(this.nextMs * 2, MAX_WAIT_MS);
    return ms;
  }
}
