import { canonicalDecimal, isPlainHttpUrl, priceSchema } from './llm';

describe('canonicalDecimal', () => {
  it.each([
    ['0.15', '0.15'],
    ['0.150', '0.15'],
    ['000.5', '0.5'],
    ['3', '3'],
    ['3.0', '3'],
    ['1.', '1'],
    ['0', '0'],
    ['1e3', '1000'],
    ['1.5E-7', '0.00000015'],
    ['12345678901234567890.000000000000000001', '12345678901234567890.000000000000000001'],
  ])('reads %s as %s', (text, expected) => {
    expect(canonicalDecimal(text)).toBe(expected);
  });

  it.each(['-1', '+1', '.5', ' 1', '1 ', '1,5', '0x10', 'NaN', 'Infinity', '', '1e41', '1e-40'])(
    'refuses %j',
    (text) => {
      expect(canonicalDecimal(text)).toBeNull();
    },
  );
});

describe('isPlainHttpUrl', () => {
  it.each(['https://api.example.com/v1', 'http://10.0.0.5:8080/'])('accepts %s', (url) => {
    expect(isPlainHttpUrl(url)).toBe(true);
  });
  it.each([
    'ftp://example.com/',
    'api.example.com',
    'https://u:p@example.com/',
    'https://u@example.com/',
    'file:///etc/passwd',
  ])('refuses %s', (url) => {
    expect(isPlainHttpUrl(url)).toBe(false);
  });
});

describe('priceSchema', () => {
  it.each([
    ['0.15', '0.15'],
    [0.075, '0.075'],
    [3, '3'],
    ['0.000001', '0.000001'],
    ['1.5E-6', null],
    ['0.1234567', null],
    [1e-7, null],
  ])('reads %j as %j (null: refused, more than 6 decimals)', (price, expected) => {
    const parsed = priceSchema.safeParse(price);
    expect(parsed.success ? parsed.data : null).toBe(expected);
  });
});
