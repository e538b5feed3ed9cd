import { isSecretFieldName } from '@pack/contracts';

export const REDACTED = '[REDACTED]';
const MAX_DEPTH = 8;

/** Patterns of secrets inside free text (an Authorization value quoted in an error message). */
const SECRET_TEXT = /\b(Token|Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/g;

export function redactText(text: string): string {
  return text.replace(SECRET_TEXT, `$1 ${REDACTED}`);
}

/**
 * Returns a copy of a value with every secret field replaced, at any depth. Field names come
 * from the contracts package, so a new secret field is redacted everywhere at once.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value instanceof Date || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = isSecretFieldName(key) && item !== null && item !== '' ? REDACTED : redact(item, depth + 1);
  }
  return out;
}
