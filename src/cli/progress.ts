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
  private stepName: string | undefined;
  private stepStarted = 0;
  private stepFraction: number | undefined;

  constructor(
    /** What is counted, or done, as the line starts: "queued", "pruned", "setting up". */
    private readonly what: string,
  ) {
    const set = (name: string) => (process.env[name] ?? '') !== '' && process.env[name] !== 'false';
    this.shown = process.stderr.isTTY === true && !set('CI') && !set('NO_COLOR');
  }

  /** `done` so far, and what is `left` if known (`about`: an estimate); drawn at most every DRAW_EVERY_MS. */
  update(done: number, left?: { count: number; about?: boolean }): void {
    const now = performance.now();
    if (!this.shown || (this.drawnAt !== undefined && now - this.drawnAt < DRAW_EVERY_MS)) return;
    this.drawnAt = now;
    const rate = Math.round(done / Math.max((now - this.started) / 1000, 0.001));
    const rest = left === undefined ? '' : `, ${left.about ? 'about ' : ''}${count(Math.max(0, Math.round(left.count)))} left`;
    process.stderr.write(`\r${this.what} ${count(done)} (${count(rate)}/s)${rest}\x1b[K`);
  }

  /**
   * A step whose work the server measures (`fraction` done, 0 to 1, or undefined where it does not
   * say): how far it is, how long it took so far and about how long is left, each step timed from
   * its own start.
   */
  step(step: string, fraction: number | undefined): void {
    const now = performance.now();
    if (step !== this.stepName) [this.stepName, this.stepStarted, this.stepFraction] = [step, now, undefined];
    if (!this.shown || (this.drawnAt !== undefined && now - this.drawnAt < DRAW_EVERY_MS)) return;
    this.drawnAt = now;
    const seconds = (now - this.stepStarted) / 1000;
    const measured = fraction !== undefined && fraction > 0;
    // A server stops saying once the rows are copied (MariaDB, while it swaps the tables): the last share stands, with no time left to tell.
    if (measured) this.stepFraction = fraction;
    const share = this.stepFraction === undefined ? '' : `${Math.floor(this.stepFraction * 100)} % in `;
    const left = measured ? `, about ${Math.round((seconds * (1 - fraction)) / fraction)} s left` : '';
    process.stderr.write(`\r${this.what} (${step}): ${share}${Math.round(seconds)} s${left}\x1b[K`);
  }

  /** Clears the line, before the command's own last line. */
  end(): void {
    if (this.drawnAt !== undefined) process.stderr.write('\r\x1b[K');
    this.drawnAt = undefined;
  }
}

const DRAW_EVERY_MS = 100;
const count = (n: number) => n.toLocaleString('en-US');
