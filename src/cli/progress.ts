/**
 * One line on the terminal that a long command rewrites as it goes: what it has done, how fast,
 * and what is left when that is known. Only when standard error is a terminal, and not in CI nor
 * with NO_COLOR: there the output is read by programs and logs, which a line rewritten in place
 * would garble.
 */
export class ProgressLine {
  /** Whether the line is drawn at all. */
  readonly shown: boolean;
  private readonly started = performance.now();
  private drawnAt: number | undefined;

  constructor(
    /** What is counted, as the line starts: "queued", "pruned". */
    private readonly what: string,
  ) {
    const set = (name: string) => (process.env[name] ?? '') !== '' && process.env[name] !== 'false';
    this.shown = process.stderr.isTTY === true && !set('CI') && !set('NO_COLOR');
  }

  /** `done` so far (and `left`, if known); drawn at most every DRAW_EVERY_MS. */
  update(done: number, left?: number): void {
    const now = performance.now();
    if (!this.shown || (this.drawnAt !== undefined && now - this.drawnAt < DRAW_EVERY_MS)) return;
    this.drawnAt = now;
    const rate = Math.round(done / Math.max((now - this.started) / 1000, 0.001));
    const rest = left === undefined ? '' : `, ${count(left)} left`;
    process.stderr.write(`\r${this.what} ${count(done)} (${count(rate)}/s)${rest}\x1b[K`);
  }

  /** Clears the line, before the command's own last line. */
  end(): void {
    if (this.drawnAt !== undefined) process.stderr.write('\r\x1b[K');
    this.drawnAt = undefined;
  }
}

const DRAW_EVERY_MS = 100;
const count = (n: number) => n.toLocaleString('en-US');
