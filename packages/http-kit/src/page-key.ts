import type { KeyPart } from '@pack/contracts';

/**
 * The key of a list's item: its sort values, as `after=<key>` carries them. A list sorted by a
 * numeric id alone has the id itself as its key (`after=42`: the id of the last item seen);
 * a list sorted by a time or a string and then its id joins the parts with `.`: a time as its
 * milliseconds since 1970, a string in base64url, an integer in decimal digits.
 *
 * Decoding accepts only what encoding writes (one spelling per key: no sign, leading zero,
 * padding or other base64 alphabet), so a key is checked, not guessed at.
 */
export type KeyShape = readonly ('int' | 'date' | 'string')[];

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;
const BASE64URL = /^[A-Za-z0-9_-]{1,344}$/; // up to 256 bytes
const MAX_DATE_MS = 8.64e15;

export function encodeKey(shape: KeyShape, parts: readonly KeyPart[]): string {
  if (parts.length !== shape.length) throw new Error(`a key of ${shape.length} parts, not ${parts.length}`);
  return shape
    .map((kind, i) => {
      const part = parts[i];
      if (kind === 'date' && part instanceof Date) return String(part.getTime());
      if (kind === 'string' && typeof part === 'string' && part !== '')
        return Buffer.from(part, 'utf8').toString('base64url');
      if (kind === 'int' && typeof part === 'number' && Number.isSafeInteger(part) && part >= 0)
        return String(part);
      throw new Error(`key part ${i} is not a ${kind}`);
    })
    .join('.');
}

function decodePart(kind: KeyShape[number], text: string): KeyPart | undefined {
  if (kind === 'string') {
    if (!BASE64URL.test(text)) return undefined;
    const decoded = Buffer.from(text, 'base64url').toString('utf8');
    // base64url's last digit can carry unused bits, and bytes may not be UTF-8: both re-encode differently
    return Buffer.from(decoded, 'utf8').toString('base64url') === text ? decoded : undefined;
  }
  if (!DECIMAL.test(text)) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n)) return undefined;
  if (kind === 'int') return n;
  return n <= MAX_DATE_MS ? new Date(n) : undefined;
}

/** The parts of a key of this shape, or undefined when `text` is not one. */
export function decodeKey(shape: KeyShape, text: string): KeyPart[] | undefined {
  const texts = text.split('.');
  if (texts.length !== shape.length) return undefined;
  const parts: KeyPart[] = [];
  for (const [i, kind] of shape.entries()) {
    const part = decodePart(kind, texts[i]!);
    if (part === undefined) return undefined;
    parts.push(part);
  }
  return parts;
}
