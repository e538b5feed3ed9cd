import { classifyProviderError, ProviderHttpError, scrub } from './errors';
import { jsonValues, Redactor } from './redact';

/** Not a real key: the shape of one (an sk- prefix, 37 characters), spelled to say so. */
const KEY = 'sk-mjFAKE-only-for-this-test-keyZQ9x';

describe('secrets are removed from provider text before it is cut', () => {
  it.each([
    ['the whole key', `Incorrect API key provided: ${KEY}.`],
    [
      'a 10-character head and the last 4 (OpenAI style)',
      'Incorrect API key provided: sk-mjFAKE-********************ZQ9x.',
    ],
    ['13 characters from the middle', `key ${KEY.slice(9, 22)} is not valid`],
    ['the key lower-cased', `unknown key ${KEY.toLowerCase()}`],
    ['the key upper-cased', `UNKNOWN KEY ${KEY.toUpperCase()}`],
    ['the key URL-encoded', `see ?key=${encodeURIComponent(`${KEY}/+ &`)}`],
  ])('%s', (_what, text) => {
    const secret = _what === 'the key URL-encoded' ? `${KEY}/+ &` : KEY;
    const out = scrub(text, [secret]);
    expect(out).toContain('***');
    for (let i = 0; i + 6 <= secret.length; i++)
      expect(out.toLowerCase()).not.toContain(secret.slice(i, i + 6).toLowerCase());
  });

  it('a JSON-escaped secret (quotes, backslashes, slashes) is removed', () => {
    const secret = 'pa"ss\\wo/rd-secret';
    const body = JSON.stringify({ error: { message: `bad ${secret}` } }).replace(/\//g, '\\/');
    expect(scrub(body, [secret])).toBe('{"error":{"message":"bad ***"}}');
  });

  it('a key cut at the message limit leaves no fragment: removal comes first', () => {
    const text = `${'x'.repeat(296)} ${KEY}`;
    const out = scrub(text, [KEY]);
    expect(out).toBe(`${'x'.repeat(296)} ***`);
  });

  it('fragments shorter than 6 characters and other text stay', () => {
    expect(scrub('model sk-mj not found, ZQ9x', [KEY])).toBe('model sk-mj not found, ZQ9x');
  });

  it('a short secret (4 or 5 characters) is removed where it occurs whole, in any case', () => {
    expect(scrub('token AbCd1 was rejected; abcd1 again', ['AbCd1'])).toBe(
      'token *** was rejected; *** again',
    );
  });

  it('tokens learnt later are removed too', () => {
    const redactor = new Redactor([KEY]);
    redactor.add('eyJhbGciOiJIUzI1NiJ9.access');
    expect(redactor.redact('bearer eyJhbGciOiJIUzI1NiJ9.access expired')).toBe('bearer *** expired');
  });

  it('every string and number of a request_payload is a secret', () => {
    expect(jsonValues({ a: 'x-token-123', b: [{ c: 42 }, 'two'], d: null, e: true })).toEqual([
      'x-token-123',
      '42',
      'two',
    ]);
  });
});

describe('service owners see a classification and the provider error code, never its text', () => {
  it('"the provider refused the credentials, HTTP 401" plus the code', () => {
    const error = new ProviderHttpError(`chat completion: HTTP 401: Incorrect API key provided: ${KEY}`, 401);
    error.providerCode = 'invalid_api_key';
    expect(classifyProviderError(error)).toBe(
      'the provider refused the credentials, HTTP 401 (provider error code invalid_api_key)',
    );
  });
});
