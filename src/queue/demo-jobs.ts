import { randomInt } from 'node:crypto';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** The article's payload: 64 random lowercase letters. */
export function randomLetters(length = 64): string {
  let text = '';
  for (let i = 0; i < length; i++) text += LETTERS[randomInt(26)];
  return text;
}

/** The article's candidate condition: a random first letter of `d`. */
export function randomPrefixPattern(): string {
  return `${LETTERS[randomInt(26)]}%`;
}
