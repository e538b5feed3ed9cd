import { parse as losslessParse, stringify as losslessStringify } from 'lossless-json';

/**
 * Users' JSON (declarations, PackData, a model's JSON reply) kept digit for digit
 * (docs/decisions/0039). JSON.parse reads every number as a double, so a 19-digit id or
 * `0.12345678901234567890` would come back changed, and `3.10` or `1e2` respelled as `3.1` and
 * `100`. Here a number whose literal is the one JavaScript writes for its double stays a plain
 * `number`; any other (too many digits, beyond the double range, too small, or spelled another
 * way) is an ExactNumber holding its literal, and stringifyExactJson writes it back unchanged.
 */

let exactWritten = false;

/**
 * A JSON number literal kept as its text: one a double cannot hold exactly, or one JavaScript
 * would write otherwise (`3.10`, `1e2`).
 */
export class ExactNumber {
  constructor(readonly text: string) {}

  /** The nearest double: what a comparison or a JSON Schema check sees. */
  valueOf(): number {
    return Number(this.text);
  }

  toString(): string {
    return this.text;
  }

  /**
   * Written by plain JSON.stringify (a log line, a path this module's writer is not on): the
   * digits as a string, never a changed number. stringifyExactJson writes the number itself.
   */
  toJSON(): string {
    exactWritten = true;
    return this.text;
  }
}

export const isExactNumber = (value: unknown): value is ExactNumber => value instanceof ExactNumber;

/** A decimal's value as `[sign][digits]e[exponent]` with no leading or trailing zeros ("0" for zero). */
function normalized(text: string): string | null {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return null;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  let digits = `${whole}${fraction}`;
  let power = BigInt(exponent) - BigInt(fraction.length);
  const leading = /^0*/.exec(digits)![0].length;
  digits = digits.slice(leading);
  if (digits === '') return '0';
  const trailing = /0*$/.exec(digits)![0].length;
  digits = digits.slice(0, digits.length - trailing);
  power += BigInt(trailing);
  return `${sign}${digits}e${power}`;
}

/** Whether JSON.parse's double for the literal `text` denotes the same decimal value (and is finite). */
export function readsExactly(text: string): boolean {
  const parsed = Number(text);
  return Number.isFinite(parsed) && normalized(text) === normalized(String(parsed));
}

/** Only long digit runs or exponents can read inexactly: other text is JSON.parse'd alone. */
export const MAYBE_INEXACT = /\d{16}|\d[eE]/;

/**
 * Whether JavaScript writes the double of the literal `text` as `text` itself. `3.10`, `1.50`,
 * `1e2`, `-0` and `0.0000001` hold the same value as `3.1`, `1.5`, `100`, `0` and `1e-7`, but
 * users' text is what they wrote: `python: 3.10` is not Python 3.1.
 */
export function writtenAsIs(text: string): boolean {
  return String(Number(text)) === text;
}

/**
 * Text where a number may be spelled otherwise than JavaScript writes it: long digit runs,
 * exponents, a fraction ending in 0, a negative zero, or six zeros after the point (written
 * with an exponent). Other text is JSON.parse'd alone, as fast as before.
 */
const MAYBE_RESPELLED = /\d{16}|\d[eE]|\.\d*0(?!\d)|-0(?![.\d])|\.0{6}/;

const exactOptions = {
  parseNumber: (text: string): number | ExactNumber =>
    writtenAsIs(text) ? Number(text) : new ExactNumber(text),
  // As JSON.parse: the last of repeated keys wins.
  onDuplicateKey: ({ newValue }: { newValue: unknown }) => newValue,
};

/**
 * JSON text as a value whose numbers keep their text (see above). Throws a SyntaxError on
 * invalid JSON, as JSON.parse does; the result is JSON.parse's wherever every number is written
 * as JavaScript writes it.
 */
export function parseExactJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (!MAYBE_RESPELLED.test(text)) return value;
  return losslessParse(text, null, exactOptions);
}

const exactStringifiers = [
  { test: isExactNumber, stringify: (value: unknown) => (value as ExactNumber).text },
];

/** JSON.stringify that writes each ExactNumber as the number literal it was read from. */
export function stringifyExactJson(value: unknown, space?: number): string {
  exactWritten = false;
  const text = JSON.stringify(value, null, space) as string | undefined;
  if (!exactWritten || text === undefined) return text as string;
  exactWritten = false;
  return losslessStringify(value, null, space, exactStringifiers) as string;
}

/**
 * A copy with each ExactNumber as its nearest double, for checks that look at types and ranges
 * (ajv: `"type": "integer"` of 1234567890123456789012 holds); the stored value stays exact.
 */
export function approximateNumbers(value: unknown): unknown {
  if (isExactNumber(value)) return value.valueOf();
  if (Array.isArray(value)) return value.map(approximateNumbers);
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    const copy: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      // defineProperty: a "__proto__" member stays a member, as JSON.parse makes it.
      Object.defineProperty(copy, key, {
        value: approximateNumbers(member),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy;
  }
  return value;
}

/** Whether `value` holds an ExactNumber anywhere (approximateNumbers is needed for a check). */
export function holdsExactNumbers(value: unknown): boolean {
  if (isExactNumber(value)) return true;
  if (Array.isArray(value)) return value.some(holdsExactNumbers);
  if (typeof value === 'object' && value !== null) return Object.values(value).some(holdsExactNumbers);
  return false;
}
