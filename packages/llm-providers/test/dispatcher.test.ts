import { MockAgent } from 'undici';
import { createAdapter, TokenCache } from '../src';
import { HELLO, KEY } from './setups';

/** The SSRF guard will be a dispatcher: every request must go through the one given. */
describe('adapter options: dispatcher', () => {
  it('vendor3 with base_url null calls the public Gemini endpoint through the given dispatcher', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    let seenKey: unknown;
    agent
      .get('https://generativelanguage.googleapis.com')
      .intercept({ path: '/v1beta/models/gemini-2.5-flash:generateContent', method: 'POST' })
      .reply(200, (opts) => {
        seenKey = (opts.headers as Record<string, string>)['x-goog-api-key'];
        return {
          candidates: [{ content: { parts: [{ text: 'ok' }], role: 'model' }, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 },
        };
      });
    const adapter = createAdapter(
      { provider: 'vendor3', api_key: KEY, base_url: null },
      { timeout: 5, dispatcher: agent },
    );
    const out = await adapter.generate({ model: 'models/gemini-2.5-flash', messages: HELLO });
    expect(out).toMatchObject({ text: 'ok', usage: { input_tokens: 3, output_tokens: 1 } });
    expect(seenKey).toBe(KEY);
    agent.assertNoPendingInterceptors();
    await agent.close();
  });
});

describe('adapter options: genai verify_ssl', () => {
  const origin = 'https://genai.internal.example';
  const gateway = () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const pool = agent.get(origin);
    pool.intercept({ path: '/token', method: 'POST' }).reply(200, { access_token: 'tok-1', expires_in: 600 });
    pool.intercept({ path: '/chat', method: 'POST' }).reply(200, {
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
    });
    return agent;
  };
  const config = (verify_ssl: boolean) => ({
    provider: 'genai' as const,
    token_url: `${origin}/token`,
    request_url: `${origin}/chat`,
    credentials: 'Basic c2VydmljZTpwYXNzd29yZA==',
    verify_ssl,
  });

  it('verify_ssl false sends both requests through the certificate-ignoring dispatcher', async () => {
    const checked = new MockAgent();
    checked.disableNetConnect();
    const insecure = gateway();
    const adapter = createAdapter(
      config(false),
      { timeout: 5, dispatcher: checked, insecureDispatcher: insecure },
      new TokenCache(),
    );
    expect((await adapter.generate({ model: 'm', messages: HELLO })).text).toBe('hi');
    insecure.assertNoPendingInterceptors();
    await Promise.all([checked.close(), insecure.close()]);
  });

  it('verify_ssl true never uses it', async () => {
    const checked = gateway();
    const insecure = new MockAgent();
    insecure.disableNetConnect();
    const adapter = createAdapter(
      config(true),
      { timeout: 5, dispatcher: checked, insecureDispatcher: insecure },
      new TokenCache(),
    );
    expect((await adapter.generate({ model: 'm', messages: HELLO })).text).toBe('hi');
    checked.assertNoPendingInterceptors();
    await Promise.all([checked.close(), insecure.close()]);
  });
});
