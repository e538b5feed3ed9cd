/**
 * Reads an answer's JSON keeping each number's text where a double would write it otherwise
 * (`3.10`, `1e2`, 19-digit integers): the API answers users' data as written, and the console
 * shows it so. Such a number becomes a raw JSON value, which JSON.stringify writes back verbatim;
 * the numbers the API itself writes (counts, ids, tokens) read back the same and stay numbers.
 * A browser without JSON.rawJSON and the reviver's source text shows the double, as before.
 */

interface SourceContext {
  source?: string;
}

type RawJsonOf = (text: string) => unknown;

const rawJson = (JSON as unknown as { rawJSON?: RawJsonOf }).rawJSON;

function keepText(this: unknown, _key: string, value: unknown, context?: SourceContext): unknown {
  const source = context?.source;
  if (typeof value !== 'number' || source === undefined || String(value) === source) return value;
  return rawJson!(source);
}

/** A number whose text `parseExact` kept (a raw JSON value, not an object of the data). */
export function isKeptNumber(value: unknown): boolean {
  const isRaw = (JSON as unknown as { isRawJSON?: (value: unknown) => boolean }).isRawJSON;
  return isRaw !== undefined && isRaw(value);
}

export function parseExact(text: string): unknown {
  if (rawJson === undefined) return JSON.parse(text);
  return JSON.parse(text, keepText);
}

/**
 * The same data with every kept number as its nearest double again: for code that computes with
 * users' numbers (the generative UI's prop checks), as the API's own checks approximate.
 */
export function approximate<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * A fetch whose JSON answers read with `parseExact`. The answer is read whole and handed on with
 * its length, so the client reads it with `json()` (it parses a chunked answer's text itself).
 */
export async function exactFetch(request: Request): Promise<Response> {
  const response = await fetch(request);
  const type = response.headers.get('content-type') ?? '';
  if (!response.ok || !/\bjson\b/i.test(type)) return response;
  const text = await response.text();
  const headers = new Headers(response.headers);
  headers.delete('content-encoding');
  headers.set('content-length', String(new TextEncoder().encode(text).length));
  const exact = new Response(text, { status: response.status, statusText: response.statusText, headers });
  Object.defineProperty(exact, 'json', { value: async () => parseExact(text) });
  return exact;
}
