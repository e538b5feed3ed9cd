/**
 * What a response shows instead of a secret (DESIGN section 4): a fixed marker, plus the last 4
 * characters only when the secret is long enough for them to reveal little.
 */
export const SECRET_MASK = '********';
const REVEAL_FROM_LENGTH = 12;
const REVEALED_CHARS = 4;

export function maskSecret(value: string): string {
  if (value === '') return '';
  return value.length >= REVEAL_FROM_LENGTH ? `${SECRET_MASK}${value.slice(-REVEALED_CHARS)}` : SECRET_MASK;
}

/**
 * True for a value shaped like a mask. A client that sends a masked value back (a form that
 * re-submits what it read) means "keep the stored secret", so such a value is never stored.
 */
export function isMaskedSecret(value: string): boolean {
  return value.startsWith(SECRET_MASK) && value.length <= SECRET_MASK.length + REVEALED_CHARS;
}
