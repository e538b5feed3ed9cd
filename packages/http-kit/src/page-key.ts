import type { KeyPart } from '@pack/contracts';

/**
 * The key of a list's item: its sort values, as `after=<key>` carries them. A list sorted by a
 * numeric id alone has the id itself as its key (`after=42`: the id of the last item seen);
 * a list sorted by a time or a string and then its id joins the parts with `.`: a time as its
 * milliseconds since 1970, a string in base64url, an integer in decimal digits.
 *
 * A key is a position in the list's order, not a reference: its item need not exist. So every
 * text of the documented pattern (keyPattern) is a key, and nothing else is: decimal digits
 * without sign or leading zero, base64url without padding. A base64url text whose bytes are not
 * UTF-8 reads as the string with replacement characters, which is a position like any other.
 */
export type KeyShape = readonly ('int' | 'date' | 'string')[];

/** Up to 16 digits: every safe integer (ids never pass it, so Number() of a larger one only rounds a position). */
const INT = '(0|[1-9][0-9]{0,15})';
/** Up to 15 digits: every such millisecond count is a valid date (the last one is 8.64e15). */
const DATE = '(0|[1-9][0-9]{0,14})';
/** Up to 256 bytes. */
const STRING = '[A-Za-z0-9_-]{1,344}';
const PART = { int: INT, date: DATE, string: STRING } as const;

/** The text of every key of a shape, as the OpenAPI document states it. */
export function keyPattern(shape: KeyShape): string {
  return `^${shape.map((kind) => PART[kind]).join('\\.')}$`;
}

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

/** The parts of a key of this shape, or undefined when `text` is not one. */
export function decodeKey(shape: KeyShape, text: string): KeyPart[] | undefined {
  if (!new RegExp(keyPattern(shape)).test(text)) return undefined;
  const texts = text.split('.');
  return shape.map((kind, i): KeyPart => {
    const part = texts[i]!;
    if (kind === 'string') return Buffer.from(part, 'base64url').toString('utf8');
    return kind === 'int' ? Number(part) : new Date(Number(part));
  });
}
