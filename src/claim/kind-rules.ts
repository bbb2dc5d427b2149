import type { ClaimScope } from './sql/claim.js';
import { EVERY_KIND } from './sql/limits.js';
import type { ClaimOptions } from './types.js';

/**
 * The queue's rules on kinds as a claim loop last saw them: paused kinds, which no claim takes;
 * limited ones, which claims take only under their limit (sql/limits.ts); and grouped ones, whose
 * jobs have carried groups (sql/groups.ts), which claims share round-robin between the groups
 * (fair-share.ts).
 * Claims read limited and grouped kinds apart from the rest (kinds-apart.ts). A turn that
 * refreshes the view reads them in its first round trip, and claims no job of a kind paused or
 * limited by then outside those rules; the view shapes the candidate reads of the turns that
 * follow, which leave such kinds out (by reading kind by kind: `present` holds the kinds that have
 * jobs, read alongside while any kind is paused, limited or grouped).
 */
export interface KindRules {
  /** The queue's name (the table's). */
  queue: string;
  paused: readonly string[];
  limited: readonly string[];
  grouped: readonly string[];
  /** A limit on every kind together (`'*'`, table-limit.ts): every claim takes its jobs under it. */
  tableLimited: boolean;
  present?: readonly string[];
  /** Read the rules again in this turn; without it the turn goes by the view as it is. */
  refresh?: boolean;
}

/** No rule seen yet: a loop's view before its first turn. */
export const noKindRules = (queue: string): KindRules => ({ queue, paused: [], limited: [], grouped: [], tableLimited: false });

/** The kinds no claim reads with the rest: paused, limited and grouped. */
const heldKinds = (rules: KindRules | undefined) => new Set([...(rules?.paused ?? []), ...(rules?.limited ?? []), ...(rules?.grouped ?? [])]);

/** Whether claims of the whole queue must read kind by kind, leaving some out. */
export const readsKindByKind = (rules: KindRules) => rules.paused.length > 0 || rules.limited.length > 0 || rules.grouped.length > 0;

/** The rows of the statements that read the rules, as they came back. */
export interface KindRuleRows {
  paused: unknown;
  limited: unknown;
  grouped: unknown;
  present?: unknown;
}

/** The kinds of rows that have a `kind` column, as a statement returned them. */
export const kindsOf = (result: unknown) => (result as Array<{ kind: string }>).map((row) => row.kind);

/** The view a turn leaves for the next: the rules it read, and the kinds present if it read those. */
export function kindRulesSeen(queue: string, rows: KindRuleRows): KindRules {
  const limited = kindsOf(rows.limited);
  return {
    queue,
    paused: kindsOf(rows.paused),
    limited: limited.filter((kind) => kind !== EVERY_KIND),
    grouped: kindsOf(rows.grouped),
    tableLimited: limited.includes(EVERY_KIND),
    ...(rows.present !== undefined && { present: kindsOf(rows.present) }),
  };
}

/**
 * The locked jobs a claim may keep: none of a paused kind, and of a limited or grouped kind only
 * those its own read took (`apart`, by id: under the limit, in the group's turn).
 */
export function withinKindRules<T extends { id: number; kind: string | null }>(jobs: readonly T[], rules: KindRules, apart: ReadonlySet<number>): T[] {
  if (!readsKindByKind(rules)) return [...jobs];
  const held = heldKinds(rules);
  return jobs.filter((job) => job.kind === null || !held.has(job.kind) || apart.has(job.id));
}

/**
 * What the claim may read apart from its limited kinds, given the rules it saw: its own kinds less
 * the paused and limited ones (undefined when none is left: nothing to read), or, for a claim of
 * the whole queue while some kinds are paused or limited, the kinds present less those, and the
 * jobs without a kind.
 */
export function claimScope(options: ClaimOptions, rules: KindRules | undefined): ClaimScope | undefined {
  const held = heldKinds(rules);
  const own = options.kinds ?? [];
  if (own.length > 0) {
    const kinds = own.filter((kind) => !held.has(kind));
    return kinds.length === 0 ? undefined : { kinds };
  }
  if (held.size === 0 || rules?.present === undefined) return {};
  return { kinds: rules.present.filter((kind) => !held.has(kind)), withoutKind: true };
}

/**
 * The kinds the claim reads apart from the rest (kinds-apart.ts), limited or grouped: of its own
 * kinds, or of any for a claim of the whole queue; none paused.
 */
export function kindsApart(options: ClaimOptions, rules: KindRules | undefined): string[] {
  if (rules === undefined || (rules.limited.length === 0 && rules.grouped.length === 0)) return [];
  const paused = new Set(rules.paused);
  const own = options.kinds;
  return [...new Set([...rules.limited, ...rules.grouped])].filter((kind) => !paused.has(kind) && (own === undefined || own.length === 0 || own.includes(kind)));
}
