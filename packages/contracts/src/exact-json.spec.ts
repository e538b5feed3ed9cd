import { approximateNumbers, ExactNumber, parseExactJson, stringifyExactJson } from './exact-json';

const EXACT =
  '{"big":15397106136189694148663395280224256,"ratio":0.12345678901234567890,' +
  '"vm":{"ids":[1234567890123456789,-9007199254740993]},"huge":1e400,"tiny":-1e-400,"plain":[1,2.5,-0,1e21]}';

describe("exact JSON (users' numbers digit for digit)", () => {
  it('reads and writes every number literal as it was sent, text for text', () => {
    const value = parseExactJson(EXACT);
    expect(stringifyExactJson(value)).toBe(EXACT);
    expect((value as { big: unknown }).big).toEqual(new ExactNumber('15397106136189694148663395280224256'));
  });

  it('keeps numbers a double holds as plain numbers, and equals JSON.parse then', () => {
    const text = '{"a":9007199254740991,"b":0.1,"c":[1e+21,"1234567890123456789","1.50"],"a":2,"d":-1.5e-7}';
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

  it.each(['3.10', '1.50', '1e2', '1E2', '100.0', '-0', '-0.0', '0.0000001', '1.0e-7', '2e+0', '0.10'])(
    'keeps the text of %s, which JavaScript would write otherwise',
    (literal) => {
      const text = `{"python":${literal},"list":[${literal}]}`;
      const value = parseExactJson(text) as { python: unknown };
      expect(value.python).toEqual(new ExactNumber(literal));
      expect(stringifyExactJson(value)).toBe(text);
      expect(approximateNumbers(value)).toEqual(JSON.parse(text));
    },
  );

  it.each(['3.1', '100', '0.000001', '1e-7', '1e+21', '-1.5', '0'])('keeps %s a plain number', (literal) => {
    expect(parseExactJson(`[${literal}]`)).toEqual([Number(literal)]);
  });
});
