import { seededSecret } from '@pack/testkit';
import { LlmGatewayHarness, startLlmGateway, MODELS, admin, consumer, examples, owner } from './harness';

describe('LLM Model profiles', () => {
  let llm: LlmGatewayHarness;
  beforeAll(async () => {
    llm = await startLlmGateway();
  });
  afterAll(async () => {
    await llm.stop();
  });
  // Each test starts from an empty collection, so ids and names do not depend on other tests.
  afterEach(async () => {
    await llm.service.context.mongo.connection.collection('llm_models').deleteMany({});
  });

  it.each(Object.keys(examples) as (keyof typeof examples)[])(
    'round-trips a %s model: created, read, listed',
    async (provider) => {
      const sent = examples[provider];
      const created = await llm.create(sent);
      expect(created.status).toBe(201);
      const { id, created_at, updated_at, extra_data, ...fields } = created.body;
      expect(Number.isInteger(id)).toBe(true);
      expect(new Date(created_at).toISOString()).toBe(created_at);
      expect(updated_at).toBe(created_at);
      expect(fields).toEqual({
        name: sent.name,
        provider,
        model_name: sent.model_name,
        prompt: sent.prompt,
        timeout: 'timeout' in sent ? sent.timeout : 60,
        max_output_tokens: 4096,
        // Default by provider: a JSON-schema response format where the protocol has one.
        structured_output: ['vendor2', 'vendor1_assistant'].includes(provider) ? 'instructions' : 'native',
        fallback_models: [],
        input_price_per_1m_tokens: {
          vendor1: '0.15',
          vendor1_assistant: '2.5',
          vendor2: '3',
          vendor3: '0.075',
          genai: null,
        }[provider],
        output_price_per_1m_tokens: {
          vendor1: '0.6',
          vendor1_assistant: '10',
          vendor2: '15',
          vendor3: '0.3',
          genai: null,
        }[provider],
      });
      // Everything but the secret comes back as sent.
      const secretKey =
        { genai: 'credentials', vendor1_assistant: 'VENDOR1_API_KEY' }[provider as string] ?? 'api_key';
      const { [secretKey]: secret, ...rest } = sent.extra_data as Record<string, unknown>;
      expect(extra_data).toEqual({ ...rest, [secretKey]: `********${(secret as string).slice(-4)}` });

      const read = await llm.read(id);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
      const listed = await llm.as(admin, 'GET', MODELS);
      expect(listed.body).toEqual({ count: 1, next: null, previous: null, results: [created.body] });
    },
  );

  it('keeps prices exact: numbers and strings come back as canonical decimal strings', async () => {
    const cases: [unknown, string][] = [
      ['0.15', '0.15'],
      [0.15, '0.15'],
      ['0.150', '0.15'],
      [1e-6, '0.000001'],
      ['999999.999999', '999999.999999'],
      ['1000000', '1000000'],
      [0, '0'],
    ];
    for (const [index, [price, expected]] of cases.entries()) {
      const created = await llm.create({
        ...examples.vendor1,
        name: `priced ${index}`,
        input_price_per_1m_tokens: price,
      });
      expect({ price, stored: created.body.input_price_per_1m_tokens }).toEqual({ price, stored: expected });
    }
  });

  it('pages the list with limit and offset', async () => {
    for (const name of ['a', 'b', 'c'])
      expect((await llm.create({ ...examples.vendor2, name })).status).toBe(201);
    const page = await llm.as(owner, 'GET', `${MODELS}?limit=2&offset=1`);
    expect(page.status).toBe(200);
    expect(page.body.count).toBe(3);
    expect(page.body.results.map((model: { name: string }) => model.name)).toEqual(['b', 'c']);
    expect(page.body.next).toBeNull();
    expect(page.body.previous).toBe(`${MODELS}?limit=2&offset=0`);
  });

  it('changes fields with PATCH, switches provider only with a whole extra_data, and deletes', async () => {
    const { body: model } = await llm.create(examples.vendor1);
    const renamed = await llm.patch(model.id, {
      name: 'Renamed',
      timeout: 600,
      output_price_per_1m_tokens: null,
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Renamed', timeout: 600, output_price_per_1m_tokens: null });
    expect(renamed.body.extra_data).toEqual(model.extra_data);

    const without = await llm.patch(model.id, { provider: 'vendor3' });
    expect(without.status).toBe(400);
    expect(Object.keys(without.body.errors)).toEqual(['extra_data']);
    const partial = await llm.patch(model.id, {
      provider: 'vendor3',
      extra_data: { api_key: seededSecret('a refused api_key', { prefix: 'k-' }) },
    });
    expect(partial.status).toBe(400);
    expect(Object.keys(partial.body.errors)).toEqual(['extra_data.base_url']);
    const switched = await llm.patch(model.id, {
      provider: 'vendor3',
      extra_data: {
        api_key: seededSecret('a new api_key', { prefix: 'key-new-PLAINTEXT-', suffix: '9999' }),
        base_url: null,
      },
    });
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({
      provider: 'vendor3',
      extra_data: { api_key: '********9999', base_url: null },
    });

    expect((await llm.as(admin, 'DELETE', `${MODELS}${model.id}/`)).status).toBe(204);
    expect((await llm.read(model.id)).status).toBe(404);
    expect(await llm.storedModels()).toEqual([]);
    const [tombstone] = await llm.allStoredModels();
    expect(tombstone).toMatchObject({ _id: model.id, deleted: true, extra_data: {} });
  });

  it('answers 404 to an unknown id on read, change and delete', async () => {
    const { body: model } = await llm.create(examples.vendor2);
    const unknown = `${MODELS}${model.id + 1}/`;
    expect((await llm.as(admin, 'GET', unknown)).status).toBe(404);
    expect((await llm.as(owner, 'GET', unknown)).status).toBe(404);
    expect((await llm.as(admin, 'PATCH', unknown, { name: 'x' })).status).toBe(404);
    expect((await llm.as(admin, 'DELETE', unknown)).status).toBe(404);
    expect((await llm.storedModels()).map((stored) => stored.name)).toEqual([examples.vendor2.name]);
  });

  it('answers 409 to a name another model holds, on create and on rename', async () => {
    const { body: first } = await llm.create(examples.vendor1);
    const { body: second } = await llm.create(examples.vendor2);
    const duplicate = await llm.create({ ...examples.vendor3, name: examples.vendor1.name });
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get('content-type')).toContain('application/problem+json');
    expect((await llm.patch(second.id, { name: first.name })).status).toBe(409);
    expect((await llm.storedModels()).map((stored) => stored.name).sort()).toEqual(
      [examples.vendor1.name, examples.vendor2.name].sort(),
    );
  });

  it('lets admins write, service owners only read, and consumers nothing', async () => {
    const { body: model } = await llm.create(examples.vendor1);
    const path = `${MODELS}${model.id}/`;
    expect((await llm.as(owner, 'GET', MODELS)).status).toBe(200);
    expect((await llm.as(owner, 'GET', path)).status).toBe(200);
    for (const [principal, method, target, body] of [
      [owner, 'POST', MODELS, { ...examples.vendor2 }],
      [owner, 'PATCH', path, { name: 'mine' }],
      [owner, 'DELETE', path, undefined],
      [consumer, 'GET', MODELS, undefined],
      [consumer, 'GET', path, undefined],
      [consumer, 'POST', MODELS, { ...examples.vendor2 }],
      [consumer, 'PATCH', path, { name: 'mine' }],
      [consumer, 'DELETE', path, undefined],
    ] as const) {
      const answer = await llm.as(principal, method, target, body);
      expect({ role: principal.role, method, status: answer.status }).toEqual({
        role: principal.role,
        method,
        status: 403,
      });
    }
    expect((await llm.read(model.id)).body).toEqual(model);
  });
});
