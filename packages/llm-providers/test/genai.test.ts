import { startFakeGenai } from '@pack/testkit';
import { createAdapter, ProviderHttpError, TokenCache } from '../src';
import { CREDENTIALS, HELLO } from './setups';

type Fake = Awaited<ReturnType<typeof startFakeGenai>>;

describe('genai access tokens', () => {
  let fake: Fake;
  afterEach(() => fake.close());

  const adapterFor = (f: Fake, cache: TokenCache, credentials = CREDENTIALS) =>
    createAdapter(
      {
        provider: 'genai',
        token_url: f.tokenUrl,
        request_url: f.requestUrl,
        credentials,
        verify_ssl: true,
      },
      { timeout: 5 },
      cache,
    );

  it('fetches one token with the credentials and reuses it for later calls', async () => {
    fake = await startFakeGenai({ credentials: CREDENTIALS });
    const adapter = adapterFor(fake, new TokenCache());
    await Promise.all([1, 2, 3].map(() => adapter.generate({ model: 'm', messages: HELLO })));
    await adapter.generate({ model: 'm', messages: HELLO });
    const tokenRequests = fake.requestsTo('/oauth/token');
    expect(tokenRequests).toHaveLength(1);
    expect(tokenRequests[0]!.headers.authorization).toBe(CREDENTIALS);
    expect(fake.requestsTo('/chat')).toHaveLength(4);
  });

  it('fetches a new token when the cached one is about to expire', async () => {
    // A 1-second token is renewed a tenth of its life early, so it is never used after 0.9 s.
    fake = await startFakeGenai({ credentials: CREDENTIALS, expiresIn: 1 });
    let clock = Date.now();
    const adapter = adapterFor(fake, new TokenCache(() => clock));
    await adapter.generate({ model: 'm', messages: HELLO });
    clock += 800;
    await adapter.generate({ model: 'm', messages: HELLO });
    expect(fake.control.issued).toBe(1);
    clock += 150;
    await adapter.generate({ model: 'm', messages: HELLO });
    expect(fake.control.issued).toBe(2);
  });

  it('a 401 from request_url refreshes the token once and succeeds', async () => {
    fake = await startFakeGenai({ credentials: CREDENTIALS });
    const adapter = adapterFor(fake, new TokenCache());
    await adapter.generate({ model: 'm', messages: HELLO });
    fake.revokeTokens();
    const out = await adapter.generate({ model: 'm', messages: HELLO });
    expect(out.text).toBeTruthy();
    expect(fake.control.issued).toBe(2);
    const chats = fake.requestsTo('/chat');
    expect(chats).toHaveLength(3);
    expect(chats[2]!.headers.authorization).not.toBe(chats[1]!.headers.authorization);
  });

  it('a second 401 is a failure, not a loop, and names no token or credential', async () => {
    fake = await startFakeGenai({ credentials: CREDENTIALS });
    fake.always({ fault: { kind: 'status', status: 401, message: `bad token ${CREDENTIALS}` } });
    const adapter = adapterFor(fake, new TokenCache());
    const err = await adapter.generate({ model: 'm', messages: HELLO }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderHttpError);
    expect((err as ProviderHttpError).status).toBe(401);
    expect((err as Error).message).not.toContain(CREDENTIALS);
    expect(fake.requestsTo('/chat')).toHaveLength(2);
    expect(fake.control.issued).toBe(2);
  });

  it('wrong credentials fail at the token request without echoing them', async () => {
    fake = await startFakeGenai({ credentials: CREDENTIALS });
    const wrong = 'Basic d3Jvbmc6Y3JlZGVudGlhbHMtdGhhdC1sZWFr';
    const err = await adapterFor(fake, new TokenCache(), wrong)
      .generate({ model: 'm', messages: HELLO })
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(err).toBeInstanceOf(ProviderHttpError);
    expect(err!.message).toContain('token request');
    expect(err!.message).not.toContain('d3Jvbmc6');
    expect(fake.requestsTo('/chat')).toHaveLength(0);
  });
});

describe('the genai token request', () => {
  it('is form-encoded by default (RFC 6749 4.4: grant_type=client_credentials), JSON with token_request_format json', async () => {
    const [form, json] = await Promise.all([
      startFakeGenai({ credentials: CREDENTIALS }),
      startFakeGenai({ credentials: CREDENTIALS, tokenFormat: 'json' }),
    ]);
    try {
      const config = (f: Fake) => ({
        provider: 'genai' as const,
        token_url: f.tokenUrl,
        request_url: f.requestUrl,
        credentials: CREDENTIALS,
        verify_ssl: true,
      });
      const cache = new TokenCache();
      await createAdapter(config(form), { timeout: 5 }, cache).generate({ model: 'm', messages: HELLO });
      expect(form.requestsTo('/oauth/token')[0]).toMatchObject({
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: CREDENTIALS },
        body: 'grant_type=client_credentials',
      });
      await createAdapter({ ...config(json), token_request_format: 'json' }, { timeout: 5 }, cache).generate({
        model: 'm',
        messages: HELLO,
      });
      expect(json.requestsTo('/oauth/token')[0]!.body).toEqual({ grant_type: 'client_credentials' });
      // The JSON-only server refuses a form; the same cache holds no token to hide that.
      const refused = await createAdapter(config(json), { timeout: 5 }, cache)
        .generate({ model: 'm', messages: HELLO })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ProviderHttpError);
      expect((refused as ProviderHttpError).message).toContain('token request: HTTP 400');
    } finally {
      await Promise.all([form.close(), json.close()]);
    }
  });
});
