import { z } from 'zod';
import { HTTP_URL_PATTERN, isPlainHttpUrl, plainHttpUrl } from './http-url';

const pattern = new RegExp(`^${HTTP_URL_PATTERN}$`);

describe('HTTP_URL_PATTERN: what the OpenAPI document says is what the server takes', () => {
  it.each([
    'https://api.example.com/v1',
    'http://10.0.0.5:8080/',
    'HTTP://127.0.0.1:65535/v1?x=1#y',
    'http://[::1]:8000/chat',
    'http://[::ffff:169.254.169.254]/',
    'http://my_host-1.internal',
    'http://a.0xg/',
  ])('accepts %s, which the URL parser reads', (url) => {
    expect(pattern.test(url)).toBe(true);
    expect(isPlainHttpUrl(url)).toBe(true);
  });
  it.each([
    'http://a b/',
    'http://a/b c',
    'http://a/\u0001',
    'http://a\u0000/',
    'http://a/\u007f',
    'http://a\t.b/',
    'http://a:65536/',
    'http://a..b/',
    'http://a./',
    'http://1.2.3.999/',
    'http://0xa9fea9fe/',
    'http://300/',
    'http://[:::]/',
    'http://a%41/',
    'http://u:p@a/',
    'ftp://a/',
  ])('refuses %j', (url) => {
    expect(pattern.test(url)).toBe(false);
    expect(plainHttpUrl('x').safeParse(url).success).toBe(false);
  });
  it('allows surrounding spaces only when trimmed', () => {
    expect(plainHttpUrl('x', { trimmed: true }).safeParse('  http://a/  ').success).toBe(true);
    expect(plainHttpUrl('x').safeParse('  http://a/  ').success).toBe(false);
    expect(z.toJSONSchema(plainHttpUrl('x'))).toMatchObject({ type: 'string' });
  });
});
