/**
 * LLM Model provider settings through the gateway (item 6): whether a model takes a
 * JSON-schema response format is a setting of the model, with a fallback to instructions when
 * the server refuses the parameter; genai's token request is form-encoded as OAuth2 servers take it.
 */
import {
  CEILINGS,
  FAKE_ASSISTANT_MODEL,
  seededSecret,
  startFakeAssistants,
  startFakeGemini,
  startFakeGenai,
  startFakeOpenAi,
  waitFor,
  type FakeProviderServer,
  type RecordedRequest,
} from '@pack/testkit';
import Ajv2020 from 'ajv/dist/2020';
import { pipelineActors, type StageView } from '../pipeline-actors';
import { modelKnownToOrchestrator, startStack, type Stack } from '../stack';

const KEY = seededSecret('the api_key', { prefix: 'sk-e2e-providers-', suffix: '0000' });
const CREDENTIALS = seededSecret('the genai credentials', { prefix: 'Basic e2e-genai-', suffix: '1111' });
const MODELS = '/v1/ai/llm_models/';
/** What OpenAI answers a model without Structured Outputs (vLLM, LiteLLM and Ollama name the parameter too). */
const REFUSED_JSON_SCHEMA = {
  error: {
    message:
      "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model. Learn more about supported models at the Structured Outputs guide.",
    type: 'invalid_request_error',
    param: 'response_format',
    code: null,
  },
};
const INSTRUCTIONS = 'conforms to this JSON Schema';
const RESPONSE_SCHEMA = {
  type: 'object',
  properties: { vm: { type: 'string' } },
  required: ['vm'],
};

type Messages = { role: string; content: string }[];
const lastUser = (request: RecordedRequest) =>
  (request.body as { messages: Messages }).messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';

describe('LLM Model provider settings through the gateway', () => {
  let stack: Stack;
  let openAi: FakeProviderServer;
  let actors: ReturnType<typeof pipelineActors>;

  beforeAll(async () => {
    [stack, openAi] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    const [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(stack, ownerToken, consumerToken);
  });
  afterAll(async () => {
    await openAi?.close();
    await stack?.stop();
  });

  /** A Service with an active CONFIG processor on `model` whose reply must follow RESPONSE_SCHEMA. */
  async function serviceWithSchema(name: string, model: number, prompt = 'Do config.'): Promise<number> {
    const service = await actors.asOwner('POST', '/v1/catalog/services/', { name });
    expect(service.status).toBe(201);
    const body = {
      name: `${name} config`,
      service: service.body.id,
      kind: 'config',
      llm_model: model,
      prompt,
      response_schema: RESPONSE_SCHEMA,
      active: true,
    };
    // The catalog's Service event reaches the orchestrator asynchronously: 400 until then.
    await waitFor(async () => (await actors.asOwner('POST', '/v1/ai/processors/', body)).status === 201, {
      what: `the ${name} processor`,
    });
    return service.body.id as number;
  }

  /** Runs one CONFIG stage (with a response schema) on `model`: its stage and the provider requests it made. */
  async function configStage(
    model: number,
    fake: FakeProviderServer,
    path: string,
    name: string,
    prompt?: string,
  ) {
    const before = fake.requestsTo(path).length;
    const service = await serviceWithSchema(name, model, prompt);
    const { item } = await actors.approved(service, { size: 'small' });
    const stage = await waitFor(
      async () => {
        const latest = await stack.call(
          'GET',
          `/v1/external/serviceowner/pack/pipelines/latest/service_item/${item}/`,
        );
        const config = (latest.body?.stages as (StageView & { pack_data?: unknown })[] | undefined)?.[0];
        return config && (config.state === 'OK' || config.state === 'FAILED') ? config : undefined;
      },
      { what: `the ${name} CONFIG stage to end` },
    );
    return { stage, requests: fake.requestsTo(path).slice(before) };
  }

  const modeOfCalls = async (model: number) =>
    (
      await stack
        .service('llm-gateway')
        .context.mongo.connection.collection('llm_calls')
        .find({ model_id: model })
        .toArray()
    ).map((call) => call.mode as string);

  it('spec 2.4 rule 5 "For models without such support, the schema is converted to text instructions appended to the final prompt": a model setting, and a refused json_schema falls back to instructions', async () => {
    const created = await stack.call('POST', MODELS, {
      body: {
        name: 'No structured outputs',
        provider: 'vendor1',
        model_name: 'llama-3-8b',
        extra_data: { api_key: KEY, base_url: `${openAi.url}/v1` },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.structured_output).toBe('native');
    const model = created.body.id as number;
    await modelKnownToOrchestrator(stack, model);

    // The server refuses the parameter: the call is made again with the schema as instructions.
    openAi.next({ fault: { kind: 'body', status: 400, body: REFUSED_JSON_SCHEMA } });
    openAi.scriptReplies('{"vm":"small"}');
    const fallback = await configStage(model, openAi, '/chat/completions', 'Fallback');
    expect(fallback.stage).toMatchObject({ state: 'OK', error: null });
    expect(fallback.requests).toHaveLength(2);
    expect(fallback.requests[0]!.body).toHaveProperty('response_format.type', 'json_schema');
    expect(fallback.requests[1]!.body).not.toHaveProperty('response_format');
    expect(lastUser(fallback.requests[1]!)).toContain(INSTRUCTIONS);
    expect(await waitFor(async () => (await modeOfCalls(model)).at(0), { what: 'the call record' })).toBe(
      'instructions',
    );

    // The model's setting: every read returns it, and with `instructions` no parameter is sent.
    const patched = await stack.call('PATCH', `${MODELS}${model}/`, {
      body: { structured_output: 'instructions' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.structured_output).toBe('instructions');
    expect((await stack.call('GET', `${MODELS}${model}/`)).body.structured_output).toBe('instructions');
    const listed = await stack.call('GET', `${MODELS}?limit=100`);
    expect(listed.body.results.find((m: { id: number }) => m.id === model).structured_output).toBe(
      'instructions',
    );
    await waitFor(
      async () => {
        openAi.scriptReplies('{"vm":"small"}');
        const asSet = await configStage(model, openAi, '/chat/completions', `Setting ${Date.now()}`);
        return asSet.requests.length === 1 && !('response_format' in (asSet.requests[0]!.body as object))
          ? asSet
          : undefined;
      },
      // The gateway's profile cache follows the change event: a stage right after may still see the old one.
      { what: 'a stage sent with instructions only', timeoutMs: CEILINGS.longWait },
    ).then(({ stage, requests }) => {
      expect(stage.state).toBe('OK');
      expect(lastUser(requests[0]!)).toContain(INSTRUCTIONS);
    });

    // A provider without a JSON-schema response format cannot be set to native: 400 naming the field.
    const vendor2 = await stack.call('POST', MODELS, {
      body: {
        name: 'Messages native',
        provider: 'vendor2',
        model_name: 'claude',
        structured_output: 'native',
        extra_data: { api_key: KEY, base_url: null },
      },
    });
    expect(vendor2.status).toBe(400);
    expect(Object.keys(vendor2.body.errors)).toEqual(['structured_output']);
  });

  it('the genai token request is form-encoded (RFC 6749 4.4, grant_type=client_credentials) by default; token_request_format json keeps JSON for servers that want it', async () => {
    const [formOnly, jsonOnly] = await Promise.all([
      startFakeGenai({ credentials: CREDENTIALS }),
      startFakeGenai({ credentials: CREDENTIALS, tokenFormat: 'json' }),
    ]);
    try {
      const genai = (fake: typeof formOnly, extra: object = {}) => ({
        provider: 'genai',
        model_name: 'gpt-4o',
        extra_data: {
          token_url: fake.tokenUrl,
          request_url: fake.requestUrl,
          credentials: CREDENTIALS,
          verify_ssl: true,
          request_payload: {},
          ...extra,
        },
      });
      const form = await stack.call('POST', MODELS, { body: { name: 'Genai form', ...genai(formOnly) } });
      expect(form.status).toBe(201);
      expect(form.body.extra_data).not.toHaveProperty('token_request_format');
      const tested = await stack.call('POST', `${MODELS}test_connection/${form.body.id}/`, { body: {} });
      expect({ status: tested.status, ok: tested.body.ok }).toEqual({ status: 200, ok: true });
      const token = formOnly.requestsTo('/oauth/token')[0]!;
      expect(token.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(token.headers.authorization).toBe(CREDENTIALS);
      expect(token.body).toBe('grant_type=client_credentials');

      const json = await stack.call('POST', MODELS, {
        body: { name: 'Genai json', ...genai(jsonOnly, { token_request_format: 'json' }) },
      });
      expect(json.status).toBe(201);
      expect(json.body.extra_data.token_request_format).toBe('json');
      const jsonTested = await stack.call('POST', `${MODELS}test_connection/${json.body.id}/`, { body: {} });
      expect({ status: jsonTested.status, ok: jsonTested.body.ok }).toEqual({ status: 200, ok: true });
      expect(jsonOnly.requestsTo('/oauth/token')[0]!.body).toEqual({ grant_type: 'client_credentials' });

      // The same JSON-only server without the setting: the token request is refused, a 502 saying so.
      const refused = await stack.call('POST', `${MODELS}test_connection/${json.body.id}/`, {
        body: { extra_data: { token_request_format: 'form' } },
      });
      expect(refused.status).toBe(502);
      expect(refused.body.detail).toContain('token request: HTTP 400');
      const bad = await stack.call('PATCH', `${MODELS}${json.body.id}/`, {
        body: { extra_data: { token_request_format: 'xml' } },
      });
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.errors)).toEqual(['extra_data.token_request_format']);
    } finally {
      await Promise.all([formOnly.close(), jsonOnly.close()]);
    }
  });

  it('the OpenAPI document gives extra_data per provider for PATCH and the connection test as for create, and the server takes exactly the bodies it describes', async () => {
    const created = await stack.call('POST', MODELS, {
      body: {
        name: 'Documented bodies',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        extra_data: { api_key: KEY, base_url: `${openAi.url}/v1` },
      },
    });
    expect(created.status).toBe(201);
    const path = `${MODELS}${created.body.id}/`;
    const document = (await stack.openApi()).document as any;
    const bodyOf = (template: string, method: string) =>
      document.paths[template][method].requestBody.content['application/json'].schema;
    const ajv = new Ajv2020({ strict: false });
    const patchValid = ajv.compile(bodyOf('/v1/ai/llm_models/{id}/', 'patch'));
    const testValid = ajv.compile(bodyOf('/v1/ai/llm_models/test_connection/{id}/', 'post'));

    const openAiUrl = `${openAi.url}/v1`;
    const cases: { body: object; valid: boolean }[] = [
      // Naming a provider: its whole extra_data, as on create.
      { body: { provider: 'vendor3', extra_data: { api_key: KEY } }, valid: false },
      { body: { provider: 'vendor1', extra_data: { base_url: openAiUrl } }, valid: false },
      { body: { provider: 'vendor1', extra_data: { api_key: KEY, base_url: openAiUrl } }, valid: true },
      { body: { provider: 'vendor1' }, valid: false },
      // Without provider: some keys of the stored provider.
      { body: { extra_data: { base_url: openAiUrl } }, valid: true },
      { body: { extra_data: { organization: 'org-1' } }, valid: false },
      // URLs: no control character or space, which the server would refuse.
      { body: { extra_data: { base_url: `${openAiUrl}/\u0001` } }, valid: false },
      { body: { extra_data: { base_url: `${openAi.url}/v 1` } }, valid: false },
      { body: { extra_data: { base_url: 'http://0xa9fea9fe/' } }, valid: false },
    ];
    for (const { body, valid } of cases) {
      expect({ body, patch: patchValid(body), test: testValid(body) }).toEqual({
        body,
        patch: valid,
        test: valid,
      });
      const tested = await stack.call('POST', `${MODELS}test_connection/${created.body.id}/`, { body });
      expect({ body, status: tested.status }).toEqual({ body, status: valid ? 200 : 400 });
      const patched = await stack.call('PATCH', path, { body });
      expect({ body, status: patched.status }).toEqual({ body, status: valid ? 200 : 400 });
    }
    // The create body per provider, and now PATCH's: a client generated from it can switch provider.
    const branches = bodyOf('/v1/ai/llm_models/{id}/', 'patch').oneOf as any[];
    const genai = branches.find((branch) => branch.properties.provider?.const === 'genai');
    expect(genai.required).toEqual(expect.arrayContaining(['provider', 'extra_data']));
    expect(genai.properties.extra_data.required).toEqual(
      expect.arrayContaining(['token_url', 'request_url', 'credentials', 'verify_ssl', 'request_payload']),
    );
  });

  it('vendor3 (Gemini) with a processor without a prompt: no empty system part, which the API refuses, so the stage runs as the connection test did', async () => {
    const gemini = await startFakeGemini({ apiKey: KEY });
    try {
      const created = await stack.call('POST', MODELS, {
        body: {
          name: 'Gemini without prompt',
          provider: 'vendor3',
          model_name: 'gemini-2.5-flash',
          extra_data: { api_key: KEY, base_url: gemini.url },
        },
      });
      expect(created.status).toBe(201);
      const model = created.body.id as number;
      const tested = await stack.call('POST', `${MODELS}test_connection/${model}/`, { body: {} });
      expect(tested.status).toBe(200);
      await modelKnownToOrchestrator(stack, model);

      gemini.scriptReplies('{"vm":"small"}');
      const { stage, requests } = await configStage(
        model,
        gemini,
        ':generateContent',
        'Gemini no prompt',
        '',
      );
      expect(stage).toMatchObject({ state: 'OK', error: null });
      expect(requests).toHaveLength(1);
      expect(requests[0]!.body).not.toHaveProperty('systemInstruction');
    } finally {
      await gemini.close();
    }
  });

  it("vendor1_assistant answers with the profile's model_name (the run's model), whose prices the cost uses", async () => {
    const assistants = await startFakeAssistants({ apiKey: KEY, assistantId: 'asst_e2e_profile' });
    try {
      const created = await stack.call('POST', MODELS, {
        body: {
          name: 'Assistant on a cheaper model',
          provider: 'vendor1_assistant',
          model_name: 'gpt-4o-mini',
          input_price_per_1m_tokens: '0.15',
          output_price_per_1m_tokens: '0.6',
          extra_data: {
            VENDOR1_API_KEY: KEY,
            VENDOR1_ASSISTANT_ID: 'asst_e2e_profile',
            base_url: `${assistants.url}/v1`,
          },
        },
      });
      expect(created.status).toBe(201);
      const tested = await stack.call('POST', `${MODELS}test_connection/${created.body.id}/`, { body: {} });
      expect(tested.status).toBe(200);
      expect(assistants.runModels()).toEqual(['gpt-4o-mini']);
      expect(FAKE_ASSISTANT_MODEL).not.toBe('gpt-4o-mini');
      const run = assistants.requests.find((request) => /\/runs$/.test(request.path))!;
      expect(run.body).toMatchObject({ assistant_id: 'asst_e2e_profile', model: 'gpt-4o-mini' });
    } finally {
      await assistants.close();
    }
  });
});
