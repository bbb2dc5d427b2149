import { ExitCode, JobqError } from '../errors.js';

// Table and database names are spliced into SQL (placeholders cannot name a table), so only plain
// identifiers get through: nothing that needs quoting, nothing that could close a backtick.
const PLAIN_IDENTIFIER = /^[A-Za-z0-9_]{1,64}$/;

/** Returns `name` if it is a plain identifier (letters, digits, `_`, 1-64 chars); throws otherwise. */
export function validateIdentifier(name: string, what: 'table' | 'database'): string {
  if (!PLAIN_IDENTIFIER.test(name) || /^[0-9]+$/.test(name)) {
    throw new JobqError(
      `invalid ${what} name ${JSON.stringify(name)}: use 1-64 letters, digits or _ (not digits only)`,
      ExitCode.usage,
    );
  }
  return name;
}

/**
 * An identifier as SQL text: accepted by {@link validateIdentifier} and backtick-quoted (a table,
 * or a database). Statements take tables in this form only, so a plain name cannot reach them.
 */
export type QuotedIdentifier = string & { readonly quoted: unique symbol };

/** Backtick-quotes an identifier that {@link validateIdentifier} has accepted. */
export function quoteIdentifier(name: string): QuotedIdentifier {
  return `\`${name}\`` as QuotedIdentifier;
}
