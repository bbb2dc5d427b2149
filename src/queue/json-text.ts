/**
 * Checks of JSON text against what the servers store as sent. MariaDB's JSON check refuses text
 * nested 32 levels deep or more, and text holding a lone surrogate escape (`"\ud800"`, which
 * JSON.stringify writes for a string with half a surrogate pair); MySQL refuses nesting past 100
 * and lone surrogates too. Numbers a double cannot hold exactly would be changed by JSON.parse
 * before they are stored: `1e400` becomes `null`, 2^53 + 1 becomes 2^53.
 */

/** The deepest nesting of arrays and objects that every supported server stores. */
export const MAX_JSON_DEPTH = 31;

/** Why the servers would refuse this JSON text (as JSON.stringify writes it); undefined when they would not. */
export function unstorableJson(text: string): string | undefined {
  return scan(text, false);
}

/** A number in this JSON text (as a person wrote it) that JSON.parse would change; undefined when there is none. */
export function alteredNumber(text: string): string | undefined {
  return scan(text, true);
}

/** The text's nesting and strings, or (`numbers`) its numbers, checked in one pass; the text must be valid JSON. */
function scan(text: string, numbers: boolean): string | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (end.problem !== undefined && !numbers) return end.problem;
      i = end.at;
    } else if (numbers) {
      if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue;
      const token = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400))![0];
      const problem = numberProblem(token);
      if (problem !== undefined) return problem;
      i += token.length - 1;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return `it is nested more than ${MAX_JSON_DEPTH} levels deep, the most the servers store`;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return undefined;
}

/** Where the string that opens at `start` ends; a problem when it holds half a surrogate pair. */
function stringEnd(text: string, start: number): { at: number; problem?: string } {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return { at: i };
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) i++;
      else return { at: i, problem: LONE_SURROGATE };
    } else if (c === 0x5c) {
      if (text[i + 1] !== 'u') {
        i++;
        continue;
      }
      const unit = parseInt(text.slice(i + 2, i + 6), 16);
      i += 5;
      if (unit < 0xd800 || unit > 0xdfff) continue;
      const low = text.slice(i + 1, i + 3) === '\\u' ? parseInt(text.slice(i + 3, i + 7), 16) : NaN;
      if (unit > 0xdbff || !isLowSurrogate(low)) return { at: i, problem: LONE_SURROGATE };
      i += 6;
    }
  }
  return { at: text.length };
}

const LONE_SURROGATE = 'a string in it holds half of a UTF-16 surrogate pair (such as "\\ud800"), which the servers refuse as JSON';

const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

function numberProblem(token: string): string | undefined {
  const value = Number(token);
  if (!Number.isFinite(value)) return `the number ${token} is beyond what JSON numbers hold here; send it as a string`;
  if (/^-?\d+$/.test(token) && !Number.isSafeInteger(value)) return `the whole number ${token} is beyond 2^53 and would lose precision; send it as a string`;
  return undefined;
}
