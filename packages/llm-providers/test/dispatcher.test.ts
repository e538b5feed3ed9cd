import { MockAgent } from 'undici';
import { createAdapter } from '../src';
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
