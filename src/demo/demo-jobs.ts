import type { PreferredRange } from '../claim/sql/claim.js';
import { timeOrderedKey, type JobRow } from '../queue/new-jobs.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

// Demo data needs no cryptographic randomness; Math.random is some 50 times cheaper per letter.
const randomLetter = (): string => LETTERS[Math.floor(Math.random() * 26)]!;

/** The article's payload: 64 random lowercase letters. */
export function randomLetters(length = 64): string {
  let text = '';
  for (let i = 0; i < length; i++) text += randomLetter();
  return text;
}

/** The article's jobs: no kind, no payload, 64 random letters in each of `d` and `e`. */
export function demoRows(count: number): JobRow[] {
  return Array.from({ length: count }, (): JobRow => [timeOrderedKey(), null, null, randomLetters(), randomLetters(), 0, 0, null, null, null, null, null]);
}

/** How `start-processing`'s consumers choose candidates: the article's random first letter of `d`, or oldest first. */
export type CandidatePick = 'random-prefix' | 'oldest';
export const CANDIDATE_PICKS: readonly CandidatePick[] = ['random-prefix', 'oldest'];

/**
 * The article's candidate condition, `d LIKE '<random letter>%'`, as a range of the (status, d)
 * index read before the lane's oldest (candidatesPreferred in src/claim/sql/claim.ts).
 */
export const randomPrefixRange = (): PreferredRange => ({ index: 'status_d', where: 'd LIKE ?', values: [`${randomLetter()}%`] });

/** The claim loop's `preferred` setting for a pick. */
export const preferredFor = (pick: CandidatePick) => (pick === 'random-prefix' ? { preferred: randomPrefixRange } : {});
