import { stringifyExactJson } from '@pack/contracts';
import { ValidationError } from './errors';
import { parseJsonBody } from './json-body';
import { idSchema, listQuerySchema } from './index';

const bytes = (text: string) => new TextEncoder().encode(text);
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

function refusal(raw: Uint8Array): ValidationError {
  try {
    parseJsonBody(raw);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('the body was accepted');
}

describe('parseJsonBody', () => {
  it('parses JSON in UTF-8, a byte order mark included, and reads an empty body as no body', () => {
    expect(parseJsonBody(bytes('{"name":"Zoë","n":[1,{"a":null}]}'))).toEqual({
      name: 'Zoë',
      n: [1, { a: null }],
    });
    expect(parseJsonBody(Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes('{"a":1}')]))).toEqual({ a: 1 });
    expect(parseJsonBody(bytes(''))).toBeUndefined();
    expect(parseJsonBody(bytes(' \n'))).toBeUndefined();
  });

  it('refuses bytes that are not UTF-8 instead of storing replacement characters', () => {
    for (const raw of [
      Uint8Array.from([...bytes('{"name":"'), 0xff, ...bytes('"}')]),
      Uint8Array.from([...bytes('{"name":"'), 0xc3, ...bytes('"}')]), // a truncated two-byte sequence
      Uint8Array.from([...bytes('{"name":"'), 0xed, 0xa0, 0x80, ...bytes('"}')]), // an encoded surrogate
    ]) {
      expect(refusal(raw).errors).toEqual({ '(body)': ['not valid UTF-8'] });
    }
  });

  it('refuses text that is not JSON', () => {
    expect(refusal(bytes('{"name": ')).errors).toEqual({ '(body)': ['not valid JSON'] });
  });

  it('refuses a number beyond the double range, naming its path, and keeps large finite ones', () => {
    const message = ['is a number out of range (beyond about 1.8e308)'];
    expect(refusal(bytes('{"size":1e400}')).errors).toEqual({ size: message });
    expect(refusal(bytes('{"vm":{"disks":[10,-1e309]}}')).errors).toEqual({ 'vm.disks.1': message });
    expect(parseJsonBody(bytes('{"a":1.7e308,"b":-1e-300}'))).toEqual({ a: 1.7e308, b: -1e-300 });
  });

  it('refuses a number JSON.parse would change, naming its path; keeps every number it reads exactly', () => {
    const refused = (text: string) => refusal(bytes(text)).errors;
    expect(refused('{"price":9007199254740993}')).toEqual({
      price: [
        '9007199254740993 cannot be kept exactly as a number (too many digits, or too small); send it as a string',
      ],
    });
    expect(Object.keys(refused('{"b":-1e-400}')!)).toEqual(['b']);
    expect(Object.keys(refused('{"vm":{"disks":[10, 0.30000000000000000001]}}')!)).toEqual(['vm.disks.1']);
    expect(
      Object.keys(refused('{"a":"1e400 in a string","x":[{"k\\"":1},{"y":12345678901234567891}]}')!),
    ).toEqual(['x.1.y']);
    expect(Object.keys(refused('123456789012345678901')!)).toEqual(['(body)']);
    const kept =
      '{"a":1e21,"b":9007199254740991,"c":0.1,"d":-0,"e":1.50,"f":2.5e-7,"g":"99999999999999999999"}';
    expect(parseJsonBody(bytes(kept))).toEqual({
      a: 1e21,
      b: 9007199254740991,
      c: 0.1,
      d: -0,
      e: 1.5,
      f: 2.5e-7,
      g: '99999999999999999999',
    });
  });

  it('with exactNumbers keeps every number as sent instead, the other checks unchanged', () => {
    const exact = { exactNumbers: true };
    const text =
      '{"id":15397106136189694148663395280224256,"r":0.12345678901234567890,"vm":{"n":[-1e-400,1e400]}}';
    expect(stringifyExactJson(parseJsonBody(bytes(text), exact))).toBe(text);
    expect(parseJsonBody(bytes('{"a":1,"b":[0.1]}'), exact)).toEqual({ a: 1, b: [0.1] });
    for (const body of ['{"a":1e400,"__proto__":1}', nested(65), '{"a":12345678901234567890']) {
      expect(() => parseJsonBody(bytes(body), exact)).toThrow(ValidationError);
    }
  });

  it('refuses __proto__, constructor and prototype keys at any depth, naming the path', () => {
    // Compared as entries: an object literal cannot hold an own "__proto__" key.
    expect(Object.entries(refusal(bytes('{"__proto__":{"admin":true}}')).errors!)).toEqual([
      ['__proto__', ['the key "__proto__" is not allowed']],
    ]);
    expect(refusal(bytes('{"declaration":{"a":[{"x":1},{"constructor":{}}]}}')).errors).toEqual({
      'declaration.a.1.constructor': ['the key "constructor" is not allowed'],
    });
    expect(Object.keys(refusal(bytes('[{"prototype":1}]')).errors!)).toEqual(['0.prototype']);
    // The same words as values, or inside longer keys, are ordinary data.
    expect(parseJsonBody(bytes('{"kind":"constructor","__proto__x":1,"my_prototype":"__proto__"}'))).toEqual({
      kind: 'constructor',
      __proto__x: 1,
      my_prototype: '__proto__',
    });
  });

  it('accepts 64 levels of nesting and refuses 65, or thousands, without overflowing the stack', () => {
    expect(parseJsonBody(bytes(nested(64)))).toBeDefined();
    expect(parseJsonBody(bytes(`{"a":${nested(63)}}`))).toBeDefined();
    const limit = ['nested deeper than 64 levels (the limit)'];
    // The member that holds the deep value is named (element 0 of a top-level array).
    for (const body of [nested(65), nested(100_000)]) {
      expect(refusal(bytes(body)).errors).toEqual({ 0: limit });
    }
    expect(refusal(bytes(`{"a":${nested(64)}}`)).errors).toEqual({ a: limit });
    expect(refusal(bytes(`{"ok":1,"b":{"c":${nested(70)}}}`)).errors).toEqual({ b: limit });
  });
});

describe('ids in paths and queries', () => {
  it.each(['0x5', '+5', ' 5', '5 ', '5.0', '1e3', '05', '-5', '0', '', '9007199254740992', '٥'])(
    'refuses %j',
    (text) => {
      expect(idSchema.safeParse(text).success).toBe(false);
    },
  );

  it('takes decimal digits up to MAX_SAFE_INTEGER', () => {
    expect(idSchema.parse('5')).toBe(5);
    expect(idSchema.parse('9007199254740991')).toBe(9_007_199_254_740_991);
  });

  it('reads ?limit= and ?offset= the same strict way', () => {
    expect(listQuerySchema.parse({})).toEqual({ limit: 50, offset: 0 });
    expect(listQuerySchema.parse({ limit: '10', offset: '0' })).toEqual({ limit: 10, offset: 0 });
    for (const query of [{ limit: '0x10' }, { limit: '1e2' }, { offset: '-1' }, { limit: '501' }])
      expect(listQuerySchema.safeParse(query).success).toBe(false);
  });
});
