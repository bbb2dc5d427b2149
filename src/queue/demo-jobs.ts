const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

// Demo data needs no cryptographic randomness; Math.random is some 50 times cheaper per letter.
const randomLetter = (): string => LETTERS[Math.floor(Math.random() * 26)]!;

/** The article's payload: 64 random lowercase letters. */
export function randomLetters(length = 64): string {
  let text = '';
  for (let i = 0; i < length; i++) text += randomLetter();
  return text;
}

/** The article's candidate condition: a random first letter of `d`. */
export function randomPrefixPattern(): string {
  return `${randomLetter()}%`;
}
