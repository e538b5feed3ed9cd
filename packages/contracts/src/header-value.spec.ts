import { HEADER_CHARACTER_MESSAGE, HEADER_LINE_BREAK_MESSAGE, headerValueText } from './header-value';
import { webhookCreateSchema, webhookPatchSchema } from './webhooks';

const messagesOf = (value: string) => {
  const result = headerValueText().safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => issue.message);
};

describe('header values ("Secrets and header values with CR, LF or NUL are refused at write time")', () => {
  it.each([
    ['CR LF and a second header', 'Bearer abc\r\nX-Injected: yes'],
    ['a lone LF', 'Bearer abc\ndef'],
    ['a lone CR', 'Bearer abc\rdef'],
  ])('refuses %s', (_what, value) => {
    expect(messagesOf(value)).toEqual([HEADER_LINE_BREAK_MESSAGE]);
  });

  it('refuses NUL with the stored-text message only', () => {
    expect(messagesOf('Bearer a\u0000b')).toEqual(['must not contain the NUL character (\\u0000)']);
  });

  it('refuses other control characters and characters beyond Latin-1', () => {
    expect(messagesOf('Bearer a\u0007b')).toEqual([HEADER_CHARACTER_MESSAGE]);
    expect(messagesOf('Bearer \u20ac')).toEqual([HEADER_CHARACTER_MESSAGE]);
  });

  it('accepts tab, space, visible ASCII and Latin-1', () => {
    expect(messagesOf('Bearer\tabc-DEF_123.~+/=')).toEqual([]);
    expect(messagesOf('Token caf\u00e9')).toEqual([]);
    expect(messagesOf('')).toEqual([]);
  });

  it('is the check of a webhook authorization, on create and on change', () => {
    const create = webhookCreateSchema.safeParse({
      name: 'n',
      service: 1,
      target_url: 'https://example.com/hook',
      authorization: 'Bearer x\r\nX-Injected: yes',
    });
    expect(create.success).toBe(false);
    expect(create.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['authorization', HEADER_LINE_BREAK_MESSAGE],
    ]);
    const patch = webhookPatchSchema.safeParse({ authorization: 'Bearer x\n' });
    expect(patch.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['authorization']);
  });

  it('refuses a webhook target_url with CR, LF or tab, which the URL parser would drop', () => {
    const patch = webhookPatchSchema.safeParse({ target_url: 'https://example.com/ho\r\nok' });
    expect(patch.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      [
        'target_url',
        'must be an http(s) URL without credentials, spaces or control characters, whose host is a name, an IPv4 or a bracketed IPv6 address',
      ],
    ]);
  });
});

it('refuses a lone surrogate in a header value with the stored-text message only', () => {
  const result = headerValueText().safeParse('Bearer \ud800');
  expect(result.error?.issues.map((issue) => issue.message)).toEqual([
    'must be well-formed Unicode: no unpaired surrogate such as \\ud800',
  ]);
});
