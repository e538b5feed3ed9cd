import { MODEL_URL_RULE } from '@pack/contracts';
import { seededSecret, startFakeOpenAi } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

const MODELS = '/v1/ai/llm_models/';
/**
 * The gateway's general limit, short here so that a provider slower than it costs this file
 * seconds, not the default 30 s: the connection test must outlast it as the model's timeout allows.
 */
const GENERAL_LIMIT_MS = 4000;

describe('LLM models through the gateway', () => {
  let stack: Stack;
  let ownerToken: string;
  let consumerToken: string;
  beforeAll(async () => {
    stack = await startStack({ env: { gateway: { UPSTREAM_TIMEOUT_MS: String(GENERAL_LIMIT_MS) } } });
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

  // Registration only: nothing here connects to these addresses (tests reach loopback only).
  it('"connect the service to a large language model provider (hosted providers, enterprise gateways, private models)": private-network and loopback URLs are stored', async () => {
    const vendor1 = await stack.call('POST', MODELS, {
      body: {
        name: 'Company vLLM',
        provider: 'vendor1',
        model_name: 'llama-3.1-70b',
        extra_data: { api_key: 'sk-private-model-0001', base_url: 'http://10.0.0.5:8000/v1' },
      },
    });
    expect(vendor1.status).toBe(201);
    expect(vendor1.body.extra_data.base_url).toBe('http://10.0.0.5:8000/v1');
    const genai = await stack.call('POST', MODELS, {
      body: {
        name: 'Company gateway',
        provider: 'genai',
        model_name: 'gateway-model',
        extra_data: {
          token_url: 'https://192.168.1.20/oauth/token',
          request_url: 'http://[fd12:3456::7]:8080/v1/chat/completions',
          credentials: 'Basic cHJpdmF0ZS1nYXRld2F5LTAwMDE=',
          verify_ssl: true,
          request_payload: {},
        },
      },
    });
    expect(genai.status).toBe(201);
    const moved = await stack.call('PATCH', `${MODELS}${vendor1.body.id}/`, {
      body: { extra_data: { base_url: 'http://172.16.4.2:11434/v1', api_key: 'sk-private-model-0001' } },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.extra_data.base_url).toBe('http://172.16.4.2:11434/v1');
  });

  it('link-local and cloud metadata model URLs stay refused; the refusal says what to set and where', async () => {
    for (const base_url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]:8000/v1']) {
      const refused = await stack.call('POST', MODELS, {
        body: {
          name: 'Metadata',
          provider: 'vendor1',
          model_name: 'gpt-4o-mini',
          extra_data: { api_key: 'sk-metadata-0001', base_url },
        },
      });
      expect(refused.status).toBe(400);
      const [reason] = refused.body.errors['extra_data.base_url'] as string[];
      expect(reason).toMatch(/ is a (cloud metadata|link-local) address: /);
      expect(reason).toContain(
        'may reach it only if PACK_ALLOWED_TARGET_CIDRS of the llm-gateway service names its range',
      );
    }
    // The OpenAPI text says the rule where the URL is described.
    const document = JSON.stringify((await stack.openApi()).document);
    expect(document).toContain(JSON.stringify(MODEL_URL_RULE).slice(1, -1));
  });

  it('"Time-out for requests to the provider": a connection test answers within the model\'s timeout, not the gateway\'s general limit', async () => {
    const key = seededSecret('the slow provider api_key', { prefix: 'sk-slow-' });
    const slow = await startFakeOpenAi({ apiKey: key });
    try {
      slow.always({ latencyMs: GENERAL_LIMIT_MS + 1500 });
      const created = await stack.call('POST', MODELS, {
        body: {
          name: 'Slow model',
          provider: 'vendor1',
          model_name: 'gpt-4o-mini',
          timeout: 20,
          extra_data: { api_key: key, base_url: `${slow.url}/v1` },
        },
      });
      expect(created.status).toBe(201);
      const tested = await stack.call('POST', `${MODELS}test_connection/${created.body.id}/`, { body: {} });
      expect({ status: tested.status, body: tested.body }).toMatchObject({
        status: 200,
        body: { ok: true, attempts: 1, reply_excerpt: 'Hello from the fake provider.' },
      });
      expect(tested.body.latency_ms).toBeGreaterThanOrEqual(GENERAL_LIMIT_MS + 1500);

      // The model's own timeout still ends the test, with the provider's 504, not the gateway's.
      const short = await stack.call('POST', `${MODELS}test_connection/${created.body.id}/`, {
        body: { timeout: 1 },
      });
      expect(short.status).toBe(504);
      expect(short.body.detail).toMatch(/^the provider did not answer within the model timeout of 1 s/);
    } finally {
      await slow.close();
    }
  });
});
