import { types } from 'node:util';
import { isSecretFieldName } from '@pack/contracts';

export const REDACTED = '[REDACTED]';
/** What stands in for an object that contains itself (pino's serializer writes the same). */
export const CIRCULAR = '[Circular]';

/** Patterns of secrets inside free text (an Authorization value quoted in an error message). */
const SECRET_TEXT = /\b(Token|Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/g;

export function redactText(text: string): string {
  return text.replace(SECRET_TEXT, `$1 ${REDACTED}`);
}

/** The objects on the path from the logged value down to the one being read (a cycle guard). */
type Ancestors = Set<object>;

/** An error as a plain object (its own fields are not enumerable), with secrets in its text removed. */
function errorObject(error: Error, ancestors: Ancestors): Record<string, unknown> {
  const out: Record<string, unknown> = { type: error.name, message: redactText(error.message) };
  if (error.stack) out.stack = redactText(error.stack);
  for (const [key, item] of Object.entries(error)) out[key] = redactField(key, item, ancestors);
  if (error.cause !== undefined) out.cause = redactValue(error.cause, ancestors);
  return out;
}

function redactField(key: string, item: unknown, ancestors: Ancestors): unknown {
  return isSecretFieldName(key) && item !== null && item !== '' ? REDACTED : redactValue(item, ancestors);
}

function redactObject(value: object, ancestors: Ancestors): unknown {
  // An error made in another realm (Node's own, seen from a vm context such as jest's) is no
  // `instanceof Error` here, and its fields are not enumerable: it would be written as `{}`.
  if (value instanceof Error || types.isNativeError(value)) return errorObject(value, ancestors);
  if (Array.isArray(value)) {
    const items = value.map((item) => redactValue(item, ancestors));
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const clean = redactField(key, item, ancestors);
    if (clean !== item) out ??= { ...(value as Record<string, unknown>) };
    if (out) out[key] = clean;
  }
  return out ?? value;
}

function redactValue(value: unknown, ancestors: Ancestors): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date || Buffer.isBuffer(value)) return value;
  if (ancestors.has(value)) return CIRCULAR;
  ancestors.add(value);
  try {
    return redactObject(value, ancestors);
  } finally {
    ancestors.delete(value);
  }
}

/**
 * A value with every secret field replaced and errors turned into plain objects. There is no depth
 * limit: every nested object, array and error cause is read, however deep; an object that contains
 * itself is written once and its inner occurrence becomes "[Circular]" (the guard is the set of
 * objects on the current path, so the same object reached twice side by side is read twice). Field
 * names come from the contracts package, so a new secret field is redacted everywhere at once.
 * What needs no change is returned as it is (no copy on the hot path of access logs).
 */
export function redact(value: unknown): unknown {
  return redactValue(value, new Set());
}
