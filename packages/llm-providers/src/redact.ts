/**
 * Secret removal for provider text (error bodies, run errors, refusals) before it is cut, shown
 * or logged. A provider may echo a key whole, a fragment of it ("sk-abcde****wxyz"), lower-cased,
 * URL-encoded or JSON-escaped: any run of MIN_FRAGMENT or more characters that occurs in any of
 * these forms of a secret is replaced by `***`, whatever its letter case.
 */
export const MIN_FRAGMENT = 6;
/** Shorter secrets are removed where they occur whole; below this length they are not secrets. */
const MIN_SECRET = 4;
export const REDACTED = '***';

/** The written forms a secret may take in provider text. */
function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const url = encodeURIComponent(secret);
  return [
    ...new Set([
      secret,
      url,
      url.replace(/%20/g, '+'),
      json,
      json.replace(/\//g, '\\/'),
      // \u-escaped forms (some JSON encoders escape every non-ASCII character).
      secret.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    ]),
  ].map(asciiLower);
}

/** Lower-cases A-Z only, so positions in the text and in its lower-cased copy stay the same. */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** What to look for, prepared once per call: fragments of the long secrets, the short ones whole. */
export class Redactor {
  private readonly fragments = new Set<string>();
  private readonly whole = new Set<string>();

  constructor(secrets: Iterable<string> = []) {
    for (const secret of secrets) this.add(secret);
  }

  add(secret: string): void {
    if (secret.length < MIN_SECRET) return;
    for (const form of formsOf(secret)) {
      if (form.length < MIN_FRAGMENT) this.whole.add(form);
      else
        for (let i = 0; i + MIN_FRAGMENT <= form.length; i++)
          this.fragments.add(form.slice(i, i + MIN_FRAGMENT));
    }
  }

  redact(text: string): string {
    if (this.fragments.size === 0 && this.whole.size === 0) return text;
    const haystack = asciiLower(text);
    const hidden = new Uint8Array(text.length);
    for (let i = 0; i + MIN_FRAGMENT <= haystack.length; i++)
      if (this.fragments.has(haystack.slice(i, i + MIN_FRAGMENT))) hidden.fill(1, i, i + MIN_FRAGMENT);
    for (const form of this.whole)
      for (let at = haystack.indexOf(form); at >= 0; at = haystack.indexOf(form, at + 1))
        hidden.fill(1, at, at + form.length);
    let out = '';
    for (let i = 0; i < text.length; i++) {
      if (!hidden[i]) out += text[i];
      else if (i === 0 || !hidden[i - 1]) out += REDACTED;
    }
    return out;
  }
}

/** Every string (and number) at any depth of a JSON value: genai's request_payload values. */
export function jsonValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' && Number.isFinite(value)) return [String(value)];
  if (Array.isArray(value)) return value.flatMap(jsonValues);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(jsonValues);
  return [];
}

/** Removes every secret fragment, then cuts to `max` characters (never the other way round). */
export function redactAndCut(text: string, redactor: Redactor, max: number): string {
  const out = redactor.redact(text);
  return out.length > max ? `${out.slice(0, max)}…` : out;
}
