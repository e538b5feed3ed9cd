import { approximateNumbers, ExactNumber, parseExactJson, stringifyExactJson } from './exact-json';

const EXACT =
  '{"big":15397106136189694148663395280224256,"ratio":0.12345678901234567890,' +
  '"vm":{"ids":[1234567890123456789,-9007199254740993]},"huge":1e400,"tiny":-1e-400,"plain":[1,2.5,-0,1e21]}';

describe("exact JSON (users' numbers digit for digit)", () => {
  it('reads and writes every number literal as it was sent (one a double holds in its shortest form)', () => {
    const value = parseExactJson(EXACT);
    expect(stringifyExactJson(value)).toBe(EXACT.replace('-0,', '0,').replace('1e21', '1e+21'));
    expect((value as { big: unknown }).big).toEqual(new ExactNumber('15397106136189694148663395280224256'));
  });

  it('keeps numbers a double holds as plain numbers, and equals JSON.parse then', () => {
    const text = '{"a":9007199254740991,"b":0.1,"c":[1e21,"1234567890123456789"],"a":2}';
    expect(parseExactJson(text)).toEqual(JSON.parse(text));
    expect(stringifyExactJson(parseExactJson(text), 2)).toBe(JSON.stringify(JSON.parse(text), null, 2));
  });

  it('refuses invalid JSON as JSON.parse does', () => {
    expect(() => parseExactJson('{"a":12345678901234567890')).toThrow(SyntaxError);
  });

  it('writes an exact number as its digits in a string where the exact writer is not used', () => {
    expect(JSON.stringify(parseExactJson('[0.12345678901234567890]'))).toBe('["0.12345678901234567890"]');
  });

  it('gives checks the nearest doubles, leaving the value exact', () => {
    const value = parseExactJson('{"n":[1234567890123456789012]}');
    expect(approximateNumbers(value)).toEqual({ n: [1.234567890123456789012e21] });
    expect(stringifyExactJson(value)).toBe('{"n":[1234567890123456789012]}');
  });
});
