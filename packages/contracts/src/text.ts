import { z } from 'zod';

/**
 * Text a service keeps as a database string. The database (FerretDB on PostgreSQL) cannot hold
 * the NUL character, so a value with one is refused here, naming its field, instead of failing
 * the write with a 500. User JSON kept as JSON text needs no such check: JSON.stringify writes
 * NUL as the escape `\u0000`.
 */
export const storedText = () =>
  z.string().refine((value) => !value.includes('\u0000'), 'must not contain the NUL character (\\u0000)');

const utf8 = new TextEncoder();

/** The size of a value's JSON text in UTF-8 bytes (what a limit in bytes counts, not characters). */
export function jsonBytes(value: unknown): number {
  return utf8.encode(JSON.stringify(value)).length;
}
