import { parseExactJson } from '@pack/contracts';
import { ValidationError } from './errors';
import { checkExactNumbers } from './json-numbers';

/**
 * The deepest nesting of objects and arrays a request body may have. Validation and
 * serialization recurse, so a body a few thousand levels deep would overflow the stack; no
 * document of the platform comes near this.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Keys refused anywhere in a body: they reach object prototypes when code copies a body by
 * assignment, and mongoose or zod may drop them silently, so a user would lose data unnoticed.
 */
export const FORBIDDEN_JSON_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

const utf8 = new TextDecoder('utf-8', { fatal: true });

interface Frame {
  value: object;
  depth: number;
  parent?: Frame;
  key?: string;
}

/** The member of the body that holds `frame` (a whole path 64 levels deep helps nobody). */
function memberOf(frame: Frame): string {
  let at = frame;
  while (at.parent?.key !== undefined) at = at.parent;
  return at.key ?? '(body)';
}

function pathOf(frame: Frame, last: string): string {
  const parts = [last];
  for (let at: Frame | undefined = frame; at?.key !== undefined; at = at.parent) parts.push(at.key);
  return parts.reverse().join('.');
}

/**
 * Refuses prototype keys, numbers out of the double range and nesting deeper than
 * MAX_JSON_DEPTH, naming where. Iterative, so a deep document cannot overflow the stack here
 * either.
 */
export function checkJsonShape(value: unknown, maxDepth = MAX_JSON_DEPTH, exactNumbers = false): void {
  if (typeof value !== 'object' || value === null) return;
  const stack: Frame[] = [{ value, depth: 1 }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.depth > maxDepth) {
      throw new ValidationError(`the request body is nested deeper than ${maxDepth} levels`, {
        errors: { [memberOf(frame)]: [`nested deeper than ${maxDepth} levels (the limit)`] },
      });
    }
    for (const key of Object.keys(frame.value)) {
      if (FORBIDDEN_JSON_KEYS.has(key)) {
        throw new ValidationError(`the request body holds the key "${key}", which is not allowed`, {
          errors: { [pathOf(frame, key)]: [`the key "${key}" is not allowed`] },
        });
      }
      const child = (frame.value as Record<string, unknown>)[key];
      // JSON.parse reads a number beyond the double range (1e400) as Infinity, which JSON text,
      // BSON and every reader after would turn into null: refused instead of changed unnoticed.
      // With exactNumbers the literal itself is kept (parseExactJson), so nothing is changed.
      if (typeof child === 'number' && !Number.isFinite(child) && !exactNumbers) {
        throw new ValidationError('the request body holds a number out of range', {
          errors: { [pathOf(frame, key)]: ['is a number out of range (beyond about 1.8e308)'] },
        });
      }
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
    }
  }
}

/** The result of `run`, or a 400 saying the body is `what` when it throws. */
function orRefuse<T>(run: () => T, what: string): T {
  try {
    return run();
  } catch {
    throw new ValidationError(`the request body is ${what}`, { errors: { '(body)': [what] } });
  }
}

export interface JsonBodyOptions {
  maxDepth?: number;
  /**
   * Keep every number digit for digit (ExactNumber where a double would change it, see
   * @pack/contracts exact-json.ts) instead of refusing the ones JSON.parse cannot read exactly.
   */
  exactNumbers?: boolean;
}

/**
 * A request body as JSON: strict UTF-8 (invalid bytes are refused, not replaced), then the
 * shape check and the exact-number check (json-numbers.ts), or with `exactNumbers` the exact
 * reading. An empty body is `undefined`.
 */
export function parseJsonBody(raw: Uint8Array, options: JsonBodyOptions = {}): unknown {
  const { maxDepth = MAX_JSON_DEPTH, exactNumbers = false } = options;
  const text = orRefuse(() => utf8.decode(raw), 'not valid UTF-8');
  if (text.trim() === '') return undefined;
  const value = orRefuse((): unknown => JSON.parse(text), 'not valid JSON');
  checkJsonShape(value, maxDepth, exactNumbers);
  if (exactNumbers) return parseExactJson(text);
  checkExactNumbers(text);
  return value;
}
