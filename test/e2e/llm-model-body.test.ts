/**
 * LLM Model bodies through the gateway: the output budget is a model setting sent in
 * each protocol's own field, a body copied from a read is accepted, and `base_url: null` means
 * the provider's default endpoint for every provider that has one (spec 2.1, endpoint 2).
 */
import {
  seededSecret,
  startFakeAnthropic,
  startFakeOpenAi,
  waitFor,
  type FakeProviderServer,
} from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { modelKnownToOrchestrator, startStack, type Stack } from '../stack';

const KEY = seededSecret('the api_key', { prefix: 'sk-e2e-model-body-', suffix: '0000' });
const MODELS = '/v1/ai/llm_models/';

describe('LLM Model bodies through the gateway', () => {
  let stack: Stack;
  let openAi: FakeProviderServer;
  let anthropic: FakeProviderServer;
  let actors: ReturnType<typeof pipelineActors>;

  beforeAll(async () => {
    [stack, openAi, anthropic] = await Promise.all([
      startStack(),
      startFakeOpenAi({ apiKey: KEY }),
      startFakeAnthropic({ apiKey: KEY }),
    ]);
    const [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(stack, ownerToken, consumerToken);
  });
  afterAll(async () => {
    await openAi?.close();
    await anthropic?.close();
    await stack?.stop();
  });

  /** Runs one CONFIG stage on `model` and returns the provider request it made. */
  async function oneCall(model: number, fake: FakeProviderServer, path: string, name: string) {
    const before = fake.requestsTo(path).length;
    const service = await actors.serviceWith(name, model, ['config']);
    fake.scriptReplies('{"vm":"small"}');
    await actors.approved(service, { size: 'small' });
    return waitFor(() => fake.requestsTo(path)[before]?.body as Record<string, unknown> | undefined, {
      what: `the ${name} provider call`,
    });
  }

  it("sends every provider's output budget, a model setting of at least 4096 tokens by default, in its own field", async () => {
    const created = await stack.call('POST', MODELS, {
      body: {
        name: 'Messages model',
        provider: 'vendor2',
        model_name: 'claude-sonnet',
        extra_data: { api_key: KEY, base_url: anthropic.url },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.max_output_tokens).toBe(4096);
    await modelKnownToOrchestrator(stack, created.body.id);
    expect(await oneCall(created.body.id, anthropic, '/v1/messages', 'Budget vendor2')).toMatchObject({
      max_tokens: 4096,
    });

    const raised = await stack.call('PATCH', `${MODELS}${created.body.id}/`, {
      body: { max_output_tokens: 16000 },
    });
    expect(raised.status).toBe(200);
    expect(raised.body.max_output_tokens).toBe(16000);
    expect(await oneCall(created.body.id, anthropic, '/v1/messages', 'Raised vendor2')).toMatchObject({
      max_tokens: 16000,
    });

    const chat = await stack.call('POST', MODELS, {
      body: {
        name: 'Chat model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        max_output_tokens: 8192,
        extra_data: { api_key: KEY, base_url: `${openAi.url}/v1` },
      },
    });
    expect(chat.status).toBe(201);
    await modelKnownToOrchestrator(stack, chat.body.id);
    const sent = await oneCall(chat.body.id, openAi, '/chat/completions', 'Budget vendor1');
    expect(sent).toMatchObject({ max_completion_tokens: 8192 });
    expect(sent).not.toHaveProperty('max_tokens');

    // Calls of the stage above may still be rolled up: the model itself is what must not change.
    const refused = await stack.call('PATCH', `${MODELS}${chat.body.id}/`, {
      body: { max_output_tokens: 0 },
    });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body.errors)).toEqual(['max_output_tokens']);
    expect((await stack.call('GET', `${MODELS}${chat.body.id}/`)).body.max_output_tokens).toBe(8192);
  });

  it('spec endpoint 2 takes the "LLM Model object (2.1)": the object a read returned is accepted, its read-only fields ignored', async () => {
    const created = await stack.call('POST', MODELS, {
      body: {
        name: 'Round trip',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        extra_data: { api_key: KEY, base_url: `${openAi.url}/v1` },
      },
    });
    expect(created.status).toBe(201);
    const read = await stack.call('GET', `${MODELS}${created.body.id}/`);
    expect(read.status).toBe(200);
    const tested = await stack.call('POST', `${MODELS}test_connection/${created.body.id}/`, {
      body: read.body,
    });
    expect(tested.status).toBe(200);
    expect(tested.body.ok).toBe(true);

    const renamed = await stack.call('PATCH', `${MODELS}${created.body.id}/`, {
      body: { ...read.body, id: 999_999, created_at: '2000-01-01T00:00:00.000Z', name: 'Round trip 2' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      id: created.body.id,
      name: 'Round trip 2',
      created_at: created.body.created_at,
    });
    expect((await stack.call('GET', `${MODELS}999999/`)).status).toBe(404);
  });

  it('spec endpoint 2 "with extra_data.base_url possibly null": null is the default endpoint of vendor1, vendor1_assistant, vendor2 and vendor3', async () => {
    const bodies = [
      { provider: 'vendor1', model_name: 'gpt-4o-mini', extra_data: { api_key: KEY, base_url: null } },
      {
        provider: 'vendor1_assistant',
        model_name: 'gpt-4o',
        extra_data: { VENDOR1_API_KEY: KEY, VENDOR1_ASSISTANT_ID: 'asst_1', base_url: null },
      },
      { provider: 'vendor2', model_name: 'claude-sonnet', extra_data: { api_key: KEY, base_url: null } },
      { provider: 'vendor3', model_name: 'gemini-flash', extra_data: { api_key: KEY, base_url: null } },
    ];
    for (const body of bodies) {
      const created = await stack.call('POST', MODELS, {
        body: { name: `Default ${body.provider}`, ...body },
      });
      expect({ provider: body.provider, status: created.status }).toEqual({
        provider: body.provider,
        status: 201,
      });
      expect(created.body.extra_data.base_url).toBeNull();
    }
    // A model on a stored URL may be moved back to the default endpoint, and its test overridden so.
    const moved = await stack.call('POST', MODELS, {
      body: {
        name: 'Moved back',
        provider: 'vendor2',
        model_name: 'claude-sonnet',
        extra_data: { api_key: KEY, base_url: anthropic.url },
      },
    });
    const patched = await stack.call('PATCH', `${MODELS}${moved.body.id}/`, {
      body: { extra_data: { base_url: null } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.extra_data.base_url).toBeNull();
  });

  it('numbers that cannot be stored exactly are refused naming the field; decimal strings are kept exactly as sent', async () => {
    const base = {
      provider: 'vendor1',
      model_name: 'gpt-4o-mini',
      extra_data: { api_key: KEY, base_url: `${openAi.url}/v1` },
    };
    const send = (name: string, rawPrice: string) =>
      fetch(`${stack.gateway}${MODELS}`, {
        method: 'POST',
        headers: { authorization: `Token ${stack.adminToken}`, 'content-type': 'application/json' },
        // Raw JSON text: the literal itself is what is sent, not a double JavaScript rounded first.
        body: `{"name":"${name}","input_price_per_1m_tokens":${rawPrice},${JSON.stringify(base).slice(1)}`,
      });
    for (const literal of ['9007199254740993', '-1e-400', '0.1000000000000000000001']) {
      const answer = await send(`Inexact ${literal}`, literal);
      expect({ literal, status: answer.status }).toEqual({ literal, status: 400 });
      expect(Object.keys(((await answer.json()) as { errors: object }).errors)).toEqual([
        'input_price_per_1m_tokens',
      ]);
    }
    const exact = await send('Exact as a string', '"999999.999999"');
    expect(exact.status).toBe(201);
    expect(((await exact.json()) as { input_price_per_1m_tokens: string }).input_price_per_1m_tokens).toBe(
      '999999.999999',
    );
    const listed = await stack.call('GET', `${MODELS}?limit=100`);
    expect(listed.body.results.map((model: { name: string }) => model.name)).not.toContain(
      'Inexact 9007199254740993',
    );
  });
});
