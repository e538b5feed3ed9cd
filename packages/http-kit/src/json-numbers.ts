import { MAYBE_INEXACT, readsExactly as readsExactlyAsDouble } from '@pack/contracts';
import { ValidationError } from './errors';

/**
 * Numbers a body holds that JSON.parse cannot read exactly: more significant digits
 * than a double keeps (`9007199254740993` would become ...992) or below its range (`-1e-400`
 * would become 0). They are refused with a 400 naming their path instead of being changed
 * unnoticed; a value meant to be exact (a price, say) can be sent as a decimal string.
 * Routes that keep users' JSON (`exactNumbers`: declarations, PackData) take such numbers
 * instead and keep them digit for digit (@pack/contracts exact-json.ts).
 */

/** Whether JSON.parse's double for the literal `text` denotes the same decimal value. */
export function readsExactly(text: string): boolean {
  // Out of range: checkJsonShape's refusal, with its own words.
  return !Number.isFinite(Number(text)) || readsExactlyAsDouble(text);
}

interface Container {
  kind: 'object' | 'array';
  /** The member being read: the last key of an object, the index in an array. */
  at: string;
  index: number;
}

/**
 * Refuses the first number literal of `text` (valid JSON) that JSON.parse would change, naming
 * its path (`vm.disks.1`) as the other body refusals do.
 */
export function checkExactNumbers(text: string): void {
  if (!MAYBE_INEXACT.test(text)) return;
  const stack: Container[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (expectKey) stack.at(-1)!.at = JSON.parse(text.slice(i, end + 1)) as string;
      i = end;
    } else if (char === '{' || char === '[') {
      stack.push({ kind: char === '{' ? 'object' : 'array', at: '0', index: 0 });
      expectKey = char === '{';
    } else if (char === '}' || char === ']') {
      stack.pop();
      expectKey = false;
    } else if (char === ':') {
      expectKey = false;
    } else if (char === ',') {
      const top = stack.at(-1);
      if (top?.kind === 'array') top.at = String((top.index += 1));
      expectKey = top?.kind === 'object';
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      const literal = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400))![0];
      if (!readsExactly(literal)) {
        const path = stack.map((container) => container.at).join('.') || '(body)';
        throw new ValidationError('the request body holds a number that cannot be kept exactly', {
          errors: {
            [path]: [
              `${literal.length > 40 ? `${literal.slice(0, 40)}…` : literal} cannot be kept exactly as a number (too many digits, or too small); send it as a string`,
            ],
          },
        });
      }
      i += literal.length - 1;
    }
  }
}
