import { seededSecret } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

const MODELS = '/v1/ai/llm_models/';

describe('LLM models through the gateway', () => {
  let stack: Stack;
  let ownerToken: string;
  let consumerToken: string;
  beforeAll(async () => {
    stack = await startStack();
    ownerToken = await stack.issueToken('service_owner');
    consumerToken = await stack.issueToken('consumer');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('an admin creates a model, a service owner reads it masked, a consumer is refused', async () => {
    const created = await stack.call('POST', MODELS, {
      body: {
        name: 'E2E chat model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        prompt: 'You are terse.',
        input_price_per_1m_tokens: 0.15,
        output_price_per_1m_tokens: '0.60',
        extra_data: {
          api_key: seededSecret('the api_key', { prefix: 'sk-e2e-PLAINTEXT-key-', suffix: '9876' }),
          base_url: 'https://api.example.com/v1',
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      timeout: 60,
      input_price_per_1m_tokens: '0.15',
      output_price_per_1m_tokens: '0.6',
      extra_data: { api_key: '********9876', base_url: 'https://api.example.com/v1' },
    });
    const path = `${MODELS}${created.body.id}/`;

    const read = await stack.call('GET', path, { token: ownerToken });
    expect(read.status).toBe(200);
    expect(read.body).toEqual({
      ...created.body,
      extra_data: { ...created.body.extra_data, api_key: '********' },
    });
    const listed = await stack.call('GET', MODELS, { token: ownerToken });
    expect(listed.body.results).toContainEqual(read.body);

    for (const [method, target] of [
      ['GET', MODELS],
      ['GET', path],
      ['DELETE', path],
    ] as const) {
      const refused = await stack.call(method, target, { token: consumerToken });
      expect({ method, target, status: refused.status }).toEqual({ method, target, status: 403 });
    }
    expect((await stack.call('PATCH', path, { token: ownerToken, body: { name: 'mine' } })).status).toBe(403);
    expect(JSON.stringify([created.body, read.body, listed.body])).not.toContain('PLAINTEXT');
  });
});
