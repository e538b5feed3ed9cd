import { BoundedCache } from '@pack/cache';

/** The shortest piece of a secret removed from what the target answered. */
export const SCRUB_FRAGMENT = 6;
export const REDACTED = '[redacted]';

/**
 * What of a header value is secret: all of it, or what follows an auth scheme (`Bearer `,
 * `Basic `...), so the scheme word in a target's answer is left alone.
 */
export function secretPart(value: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9_-]*\s+(\S.*)$/s.exec(value);
  return scheme ? scheme[1]! : value;
}

/**
 * The text with every piece of SCRUB_FRAGMENT or more characters of any secret replaced, in any
 * letter case: a target's answer that echoes the webhook's authorization (whole, cut at the body
 * limit, or changed in case) is stored and shown without it. Secrets shorter than the fragment
 * are matched whole.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  const lower = text.toLowerCase();
  const hidden = new Uint8Array(text.length);
  let any = false;
  for (const secret of secrets) {
    const wanted = secret.toLowerCase();
    const size = Math.min(SCRUB_FRAGMENT, wanted.length);
    if (size === 0 || lower.length < size) continue;
    const pieces = piecesOf(wanted, size);
    for (let at = 0; at + size <= lower.length; at += 1)
      if (pieces.has(lower.slice(at, at + size))) {
        hidden.fill(1, at, at + size);
        any = true;
      }
  }
  if (!any) return text;
  let out = '';
  for (let at = 0; at < text.length; at += 1)
    if (!hidden[at]) out += text[at];
    else if (at === 0 || !hidden[at - 1]) out += REDACTED;
  return out;
}

/**
 * A secret's pieces of `size` characters, made once per secret: every delivery of a webhook scrubs
 * its answer with the same secrets. At most 10,000 secrets, the least recently used dropped first.
 */
const pieceSets = new BoundedCache<string, Set<string>>({ maxEntries: 10_000, ttlMs: Infinity });

function piecesOf(wanted: string, size: number): Set<string> {
  let pieces = pieceSets.get(wanted);
  if (pieces) return pieces;
  pieces = new Set<string>();
  for (let at = 0; at + size <= wanted.length; at += 1) pieces.add(wanted.slice(at, at + size));
  pieceSets.set(wanted, pieces);
  return pieces;
}
