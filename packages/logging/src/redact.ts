import { isSecretFieldName } from '@pack/contracts';

export const REDACTED = '[REDACTED]';
const MAX_DEPTH = 8;

/** Patterns of secrets inside free text (an Authorization value quoted in an error message). */
const SECRET_TEXT = /\b(Token|Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/g;

export function redactText(text: string): string {
  return text.replace(SECRET_TEXT, `$1 ${REDACTED}`);
}

/** An error as a plain object (its own fields are not enumerable), with secrets in its text removed. */
function errorObject(error: Error, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = { type: error.name, message: redactText(error.message) };
  if (error.stack) out.stack = redactText(error.stack);
  for (const [key, item] of Object.entries(error)) out[key] = redactField(key, item, depth + 1);
  if (error.cause !== undefined && depth < MAX_DEPTH) out.cause = redact(error.cause, depth + 1);
  return out;
}

function redactField(key: string, item: unknown, depth: number): unknown {
  return isSecretFieldName(key) && item !== null && item !== '' ? REDACTED : redact(item, depth);
}

/**
 * A value with every secret field replaced, at any depth, and errors turned into plain objects.
 * Field names come from the contracts package, so a new secret field is redacted everywhere at
 * once. What needs no change is returned as it is (no copy on the hot path of access logs).
 */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (value instanceof Error) return errorObject(value, depth);
  if (value instanceof Date || Buffer.isBuffer(value)) return value;
  if (Array.isArray(value)) {
    const items = value.map((item) => redact(item, depth + 1));
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const clean = redactField(key, item, depth + 1);
    if (clean !== item) out ??= { ...(value as Record<string, unknown>) };
    if (out) out[key] = clean;
  }
  return out ?? value;
}
