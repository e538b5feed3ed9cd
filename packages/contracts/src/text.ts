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
