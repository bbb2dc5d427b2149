import type { ClaimScope } from './sql/claim.js';
import type { ClaimOptions } from './types.js';

/**
 * Paused kinds as a claim loop last saw them. A turn that refreshes the view reads them in its
 * first round trip and claims no job of a kind paused by then; the view shapes the candidate
 * reads of the turns that follow, which leave paused kinds out (by reading kind by kind: `present`
 * holds the kinds that have jobs, read alongside while anything is paused).
 */
export interface PauseView {
  /** The queue's name (the table's). */
  queue: string;
  paused: readonly string[];
  present?: readonly string[];
  /** Read the paused kinds again in this turn; without it the turn goes by the view as it is. */
  refresh?: boolean;
}

/** The view a turn leaves for the next: the paused kinds it read, and the kinds present if it read those. */
export function pauseSeen(queue: string, pausedRows: unknown, presentRows: unknown): PauseView {
  const kinds = (rows: unknown) => (rows as Array<{ kind: string }>).map((row) => row.kind);
  return { queue, paused: kinds(pausedRows), ...(presentRows !== undefined && { present: kinds(presentRows) }) };
}

/** The jobs whose kind is not paused. */
export function withoutPausedKinds<T extends { kind: string | null }>(jobs: readonly T[], pause: PauseView): T[] {
  const paused = new Set(pause.paused);
  return paused.size === 0 ? [...jobs] : jobs.filter((job) => job.kind === null || !paused.has(job.kind));
}

/**
 * What the claim may read, given the kinds it saw paused: its own kinds less the paused ones
 * (undefined when none is left: nothing to claim), or, for a claim of the whole queue while kinds
 * are paused, the kinds present less the paused ones, and the jobs without a kind.
 */
export function claimScope(options: ClaimOptions, pause: PauseView | undefined): ClaimScope | undefined {
  const paused = new Set(pause?.paused ?? []);
  const own = options.kinds ?? [];
  if (own.length > 0) {
    const kinds = own.filter((kind) => !paused.has(kind));
    return kinds.length === 0 ? undefined : { kinds };
  }
  if (paused.size === 0 || pause?.present === undefined) return {};
  return { kinds: pause.present.filter((kind) => !paused.has(kind)), withoutKind: true };
}
