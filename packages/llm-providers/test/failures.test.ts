import {
  ProviderCancelledError,
  ProviderEmptyOutputError,
  ProviderErrorBodyError,
  ProviderHttpError,
  ProviderInvalidResponseError,
  ProviderNetworkError,
  ProviderTimeoutError,
  type Provider,
  classifyProviderError,
  createAdapter,
  TokenCache,
} from '../src';
import { CEILINGS, startFakeGenai, waitFor } from '@pack/testkit';
import { CREDENTIALS, HELLO, KEY, PROVIDERS, setups, type Setup } from './setups';

/** The error a call fails with (the test fails if the call succeeds). */
async function failureOf(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(Error);
  return outcome as Error;
}

describe.each(PROVIDERS)('%s failures', (provider: Provider) => {
  let s: Setup;
  beforeEach(async () => {
    s = await setups[provider]();
  });
  afterEach(() => s.fake.close());
  const generate = (timeout?: number) =>
    s.adapter(timeout ? { timeout } : {}).generate({ model: 'm-1', messages: HELLO, maxOutputTokens: 64 });

  it('an HTTP error carries the status, the provider message and Retry-After', async () => {
    s.fake.next({ fault: { kind: 'status', status: 429, message: 'slow down please', retryAfter: '7' } });
    const err = await failureOf(generate());
    expect(err).toBeInstanceOf(ProviderHttpError);
    expect(err).toMatchObject({ status: 429, retryAfter: 7 });
    expect(err.message).toContain('slow down please');
  });

  it('a 200 with an error body is a failure', async () => {
    s.fake.next({ fault: { kind: 'error_in_200', message: 'backend exploded' } });
    const err = await failureOf(generate());
    expect(err).toBeInstanceOf(ProviderErrorBodyError);
    expect(err.message).toContain('backend exploded');
  });

  it('a reply without text is a failure, not an empty success', async () => {
    s.emptyNext();
    const err = await failureOf(generate());
    expect(err).toBeInstanceOf(ProviderEmptyOutputError);
  });

  it('HTML instead of JSON is an invalid response', async () => {
    s.fake.next({ fault: { kind: 'invalid_json' } });
    const err = await failureOf(generate());
    expect(err).toBeInstanceOf(ProviderInvalidResponseError);
    expect(err.message).toContain('text/html');
  });

  it('a body cut off mid-way is an invalid response', async () => {
    s.fake.next({ fault: { kind: 'truncated' } });
    expect(await failureOf(generate())).toBeInstanceOf(ProviderInvalidResponseError);
  });

  // The provider never answers while the test runs: only the time-out can end the call.
  it('the timeout fires while waiting for headers', async () => {
    s.fake.next({ latencyMs: CEILINGS.hang });
    const err = await failureOf(generate(0.3));
    expect(err).toBeInstanceOf(ProviderTimeoutError);
  });

  it('the caller can cancel', async () => {
    s.fake.next({ latencyMs: CEILINGS.hang });
    const controller = new AbortController();
    const pending = s.adapter().generate({ model: 'm-1', messages: HELLO, signal: controller.signal });
    await waitFor(() => s.fake.requests.length > 0, { what: 'the request at the provider' });
    controller.abort();
    expect(await failureOf(pending)).toBeInstanceOf(ProviderCancelledError);
  });
});

describe('secrets in errors', () => {
  it.each(['vendor1', 'vendor2', 'vendor3', 'vendor1_assistant'] as const)(
    '%s: a rejected key is reported without the key, even when the provider echoes it',
    async (provider) => {
      const s = await setups[provider]();
      try {
        const wrong = `${KEY}-WRONG`;
        const base =
          provider === 'vendor1' || provider === 'vendor1_assistant' ? `${s.fake.url}/v1` : s.fake.url;
        const adapter =
          provider === 'vendor1_assistant'
            ? createAdapter(
                { provider, VENDOR1_API_KEY: wrong, VENDOR1_ASSISTANT_ID: 'asst_fake', base_url: base },
                { timeout: 5 },
              )
            : createAdapter({ provider, api_key: wrong, base_url: base }, { timeout: 5 });
        const err = await failureOf(adapter.generate({ model: 'm-1', messages: HELLO }));
        expect(err).toBeInstanceOf(ProviderHttpError);
        expect((err as ProviderHttpError).status).toBeGreaterThanOrEqual(400);
        expect(err.message).not.toContain(wrong);
        expect(err.message).not.toContain(KEY);
      } finally {
        await s.fake.close();
      }
    },
  );

  it('a refused connection is a network error', async () => {
    const s = await setups.vendor1();
    const url = s.fake.url;
    await s.fake.close();
    const adapter = createAdapter(
      { provider: 'vendor1', api_key: KEY, base_url: `${url}/v1` },
      { timeout: 5 },
    );
    expect(await failureOf(adapter.generate({ model: 'm', messages: HELLO }))).toBeInstanceOf(
      ProviderNetworkError,
    );
  });
});

/** Every 6-character run of `secret`, lower-cased: none may appear in a message. */
function fragmentsOf(secret: string): string[] {
  const lower = secret.toLowerCase();
  return Array.from({ length: lower.length - 5 }, (_, i) => lower.slice(i, i + 6));
}

describe.each(PROVIDERS)('%s: a provider echoing the secret in any form', (provider: Provider) => {
  const secret = provider === 'genai' ? CREDENTIALS : KEY;
  const echoes: [string, string][] = [
    ['whole', `Incorrect API key provided: ${secret}.`],
    [
      'as a fragment with the last 4',
      `Incorrect API key provided: ${secret.slice(0, 10)}****${secret.slice(-4)}.`,
    ],
    ['cut to 13 characters', `key ${secret.slice(3, 16)}… is not valid`],
    ['lower-cased', `unknown key ${secret.toLowerCase()}`],
    ['URL-encoded', `see https://example.test/?key=${encodeURIComponent(secret)}`],
    ['JSON-escaped', JSON.stringify({ key: secret }).replace(/\//g, '\\/')],
    // Cut at 300 characters before the removal, the message would end in the key's first characters.
    ['near the message limit', `${'x'.repeat(240)} ${secret}`],
  ];
  let s: Setup;
  beforeEach(async () => {
    s = await setups[provider]();
  });
  afterEach(() => s.fake.close());

  it.each(echoes)('%s: the message holds no 6-character fragment of it', async (_form, echoed) => {
    // genai answers a 401 by fetching a new token once: a 403 is its refusal.
    const status = provider === 'genai' ? 403 : 401;
    s.fake.next({ fault: { kind: 'status', status, message: echoed } });
    const err = await failureOf(s.adapter().generate({ model: 'm-1', messages: HELLO }));
    expect(err).toBeInstanceOf(ProviderHttpError);
    const message = err.message.toLowerCase();
    const decoded = decodeURIComponent(message.replace(/%(?![0-9a-f]{2})/g, '%25'));
    for (const fragment of fragmentsOf(secret)) {
      expect(message).not.toContain(fragment);
      expect(decoded).not.toContain(fragment);
    }
    expect(err.message).toContain('***');
    expect(classifyProviderError(err as ProviderHttpError)).toMatch(
      new RegExp(`^the provider refused the credentials, HTTP ${status}`),
    );
  });
});

describe('genai: request_payload values are secrets too', () => {
  it('a token inside request_payload echoed by the provider is removed', async () => {
    const fake = await startFakeGenai({ credentials: CREDENTIALS });
    try {
      const token = 'payload-token-0123456789abcdefXYZ';
      const adapter = createAdapter(
        {
          provider: 'genai',
          token_url: fake.tokenUrl,
          request_url: fake.requestUrl,
          credentials: CREDENTIALS,
          verify_ssl: true,
          request_payload: { headers: { token } },
        },
        { timeout: 5 },
        new TokenCache(),
      );
      fake.next({
        fault: { kind: 'status', status: 400, message: `bad field token=${token.toUpperCase()}` },
      });
      const err = await failureOf(adapter.generate({ model: 'm-1', messages: HELLO }));
      for (const fragment of fragmentsOf(token)) expect(err.message.toLowerCase()).not.toContain(fragment);
    } finally {
      await fake.close();
    }
  });
});
