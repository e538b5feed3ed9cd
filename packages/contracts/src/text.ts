import { z } from 'zod';

/**
 * The checks of text a service keeps as a database string, for string types that carry other
 * checks as well (`z.url()`); `storedText()` is the plain string with them. The database
 * (FerretDB on PostgreSQL) cannot hold the NUL character, so a value with one would fail the
 * write with a 500. A lone UTF-16 surrogate (JSON `"\ud800"`) has no UTF-8 form: BSON, and a
 * secret's encryption, would keep U+FFFD instead, so the value read back is not the one written.
 * Both are refused here, naming the field. User JSON kept as JSON text needs no such check:
 * JSON.stringify escapes both (`\u0000`, `\ud800`).
 */
export const storedTextChecks = () =>
  [
    // A pattern rather than a refinement, so the OpenAPI document states it.
    z.regex(/^[^\u0000]*$/, 'must not contain the NUL character (\\u0000)'),
    z.refine<string>(
      (value) => value.isWellFormed(),
      'must be well-formed Unicode: no unpaired surrogate such as \\ud800',
    ),
  ] as const;

/** A string kept as a database string: no NUL character, no unpaired surrogate. */
export const storedText = () => z.string().check(...storedTextChecks());

const utf8 = new TextEncoder();

/** The size of a value's JSON text in UTF-8 bytes (what a limit in bytes counts, not characters). */
export function jsonBytes(value: unknown): number {
  return utf8.encode(JSON.stringify(value)).length;
}

/**
 * The characters `String.prototype.trim` removes (ECMAScript WhiteSpace and LineTerminator),
 * listed one by one: `\s` differs between regex engines (Python's takes U+001C..U+001F too), and
 * the OpenAPI document's pattern must mean the same to every client.
 */
const TRIMMED = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const SAYS_SOMETHING = new RegExp(`[^${TRIMMED}]`);

/**
 * A name or other text that must say something: at most `max` characters as sent, one of them at
 * least not white space; stored without surrounding white space. The document states exactly
 * that (maxLength, and one pattern that also keeps NUL out), so a client that follows it sends
 * only text the server takes: `"   "` is refused by both, and so is a value whose length is over
 * `max` only with its spaces.
 */
export const nonBlankText = (max: number) =>
  z
    .string()
    .max(max)
    .check(...storedTextChecks())
    .check(z.refine<string>((value) => SAYS_SOMETHING.test(value), 'must not be empty or only white space'))
    .trim()
    .meta({ pattern: `^[^\\u0000]*[^\\u0000${TRIMMED}][^\\u0000]*$` });
