import { outboxDrained, seededSecret } from '@pack/testkit';
import { createKeyRing, SECRET_MASK, SecretBox } from '@pack/secrets';
import { LogCapture, TEST_ENCRYPTION_KEY } from '@pack/testkit';
import { llmSecretContext } from '../src/service';
import { LlmGatewayHarness, startLlmGateway, MODELS, admin, examples, owner } from './harness';

const testBox = new SecretBox(createKeyRing({ test: Buffer.from(TEST_ENCRYPTION_KEY, 'base64') }, 'test'));
const plaintexts = [
  examples.vendor1.extra_data.api_key,
  examples.vendor1_assistant.extra_data.VENDOR1_API_KEY,
  examples.vendor2.extra_data.api_key,
  examples.vendor3.extra_data.api_key,
  examples.genai.extra_data.credentials,
];

describe('LLM model secrets', () => {
  // A service of its own per test, with debug logs captured.
  let llm: LlmGatewayHarness;
  let logs: LogCapture;
  beforeEach(async () => {
    logs = new LogCapture();
    llm = await startLlmGateway({ env: { LOG_LEVEL: 'debug' }, logDestination: logs });
  });
  afterEach(async () => {
    await llm.stop();
  });

  it('are encrypted at rest with the key id and bound to their model: no collection holds a plaintext', async () => {
    const ids: Record<string, number> = {};
    for (const [provider, body] of Object.entries(examples)) ids[provider] = (await llm.create(body)).body.id;
    const dump = JSON.stringify(await llm.rawDatabase());
    expect(dump).not.toContain('PLAINTEXT');
    // The genai credentials are base64 of a text holding PLAINTEXT: checked as sent too.
    for (const plaintext of plaintexts) expect(dump).not.toContain(plaintext);

    const stored = (await llm.storedModels()).find((model) => model._id === ids.vendor1)!;
    const apiKey = (stored.extra_data as { api_key: string }).api_key;
    expect(apiKey).toMatch(/^enc:v1:test:/);
    expect(testBox.decrypt(apiKey, llmSecretContext(ids.vendor1!, 'api_key'))).toBe(plaintexts[0]);
    expect(() => testBox.decrypt(apiKey, llmSecretContext(ids.vendor2!, 'api_key'))).toThrow();
    // request_payload is JSON text, so keys MongoDB-wire databases refuse are kept.
    const genai = (await llm.storedModels()).find((model) => model._id === ids.genai)!;
    expect(JSON.parse((genai.extra_data as { request_payload: string }).request_payload)).toEqual(
      examples.genai.extra_data.request_payload,
    );
  });

  it('never reach the debug logs', async () => {
    for (const body of Object.values(examples)) expect((await llm.create(body)).status).toBe(201);
    const { body: page } = await llm.as(owner, 'GET', MODELS);
    expect(page.count).toBe(5);
    expect(
      (
        await llm.patch(page.results[0].id, {
          extra_data: {
            api_key: seededSecret('a rotated api_key', { prefix: 'sk-rotated-PLAINTEXT-', suffix: '7777' }),
          },
        })
      ).status,
    ).toBe(200);
    // The changes are logged at debug, keys and all: the redaction is what keeps the secrets out.
    expect(logs.text).toContain('llm model created');
    expect(logs.text).toContain('llm model changed');
    expect(logs.text).toContain(examples.vendor1.extra_data.base_url);
    expect(logs.text).not.toContain('PLAINTEXT');
    for (const plaintext of plaintexts) expect(logs.text).not.toContain(plaintext);
  });

  it('are masked: admins see the last four characters, service owners the mask alone', async () => {
    const created: number[] = [];
    for (const body of Object.values(examples)) created.push((await llm.create(body)).body.id);
    const { body: asAdmin } = await llm.as(admin, 'GET', MODELS);
    const { body: asOwner } = await llm.as(owner, 'GET', MODELS);
    const secretsOf = (page: { results: { extra_data: Record<string, unknown> }[] }) =>
      page.results.map(
        ({ extra_data }) => extra_data.api_key ?? extra_data.VENDOR1_API_KEY ?? extra_data.credentials,
      );
    expect(secretsOf(asAdmin)).toEqual([
      '********1111',
      '********2222',
      '********3333',
      '********4444',
      '********NTU=',
    ]);
    expect(secretsOf(asOwner)).toEqual(Array(5).fill('********'));
    expect((await llm.read(created[0]!, owner)).body.extra_data.api_key).toBe('********');
    expect(JSON.stringify([asAdmin, asOwner])).not.toContain('PLAINTEXT');
  });

  it('keep their stored value when the masked value is sent back, and change when a new one is sent', async () => {
    const { body: model } = await llm.create(examples.vendor1);
    const encrypted = async () => ((await llm.storedModels())[0]!.extra_data as { api_key: string }).api_key;
    const before = await encrypted();

    const sentBack = await llm.patch(model.id, {
      extra_data: { ...model.extra_data, base_url: 'https://other.example.com/v1' },
    });
    expect(sentBack.status).toBe(200);
    expect(sentBack.body.extra_data).toEqual({
      api_key: '********1111',
      base_url: 'https://other.example.com/v1',
    });
    expect(testBox.decrypt(await encrypted(), llmSecretContext(model.id, 'api_key'))).toBe(
      examples.vendor1.extra_data.api_key,
    );
    // The bare mask a service owner sees keeps it as well.
    expect((await llm.patch(model.id, { extra_data: { api_key: SECRET_MASK } })).status).toBe(200);
    expect(testBox.decrypt(await encrypted(), llmSecretContext(model.id, 'api_key'))).toBe(
      examples.vendor1.extra_data.api_key,
    );
    expect(await encrypted()).not.toBe(before);

    const rotatedKey = seededSecret('a rotated api_key', { prefix: 'sk-rotated-PLAINTEXT-', suffix: '8888' });
    const rotated = await llm.patch(model.id, { extra_data: { api_key: rotatedKey } });
    expect(rotated.body.extra_data.api_key).toBe('********8888');
    expect(testBox.decrypt(await encrypted(), llmSecretContext(model.id, 'api_key'))).toBe(rotatedKey);
  });

  it('under secret-named keys anywhere in request_payload are masked, and kept when the mask comes back', async () => {
    const payload = {
      temperature: 0.2,
      headers: {
        Authorization: `Bearer ${seededSecret('a request_payload Authorization', { suffix: '6666' })}`,
        'X-Trace': 'visible',
      },
      tools: [{ token: seededSecret('a request_payload token', { suffix: '7777' }) }],
    };
    const created = await llm.create({
      ...examples.genai,
      extra_data: { ...examples.genai.extra_data, request_payload: payload },
    });
    expect(created.status).toBe(201);
    const adminView = {
      temperature: 0.2,
      headers: { Authorization: '********6666', 'X-Trace': 'visible' },
      tools: [{ token: '********7777' }],
    };
    expect(created.body.extra_data.request_payload).toEqual(adminView);
    const asOwner = await llm.read(created.body.id, owner);
    // Every role but admin: every value masked, whatever its name.
    expect(asOwner.body.extra_data.request_payload).toEqual({
      temperature: SECRET_MASK,
      headers: { Authorization: SECRET_MASK, 'X-Trace': SECRET_MASK },
      tools: [{ token: SECRET_MASK }],
    });

    const storedPayload = async () =>
      JSON.parse(((await llm.storedModels())[0]!.extra_data as { request_payload: string }).request_payload);
    const sentBack = await llm.patch(created.body.id, {
      extra_data: { request_payload: { ...adminView, temperature: 0.5 } },
    });
    expect(sentBack.status).toBe(200);
    expect(await storedPayload()).toEqual({ ...payload, temperature: 0.5 });

    await outboxDrained(llm.service);
    const before = await llm.rawDatabase();
    const newMask = await llm.patch(created.body.id, {
      extra_data: { request_payload: { ...adminView, headers: { 'x-api-key': SECRET_MASK } } },
    });
    expect(newMask.status).toBe(400);
    expect(Object.keys(newMask.body.errors)).toEqual(['extra_data.request_payload.headers.x-api-key']);
    const maskedOnCreate = await llm.create({
      ...examples.genai,
      name: 'masked payload',
      extra_data: { ...examples.genai.extra_data, request_payload: { auth: { password: '********' } } },
    });
    expect(Object.keys(maskedOnCreate.body.errors)).toEqual(['extra_data.request_payload.auth.password']);
    expect(await llm.rawDatabase()).toEqual(before);
  });

  it('request_payload values are masked for every role but admin, whatever their names', async () => {
    const names = [
      'api-key',
      'access_token',
      'Ocp-Apim-Subscription-Key',
      'x-auth-token',
      'private_key',
      'passwd',
      'bearer',
      'refresh_token',
      'session',
    ];
    const payload = Object.fromEntries(names.map((name, i) => [name, `value-of-${name}-${i}-abcdef`]));
    const created = await llm.create({
      ...examples.genai,
      name: 'payload names',
      extra_data: {
        ...examples.genai.extra_data,
        request_payload: { ...payload, nested: [{ seed: 123456 }] },
      },
    });
    expect(created.status).toBe(201);
    const asOwner = await llm.read(created.body.id, owner);
    expect(asOwner.body.extra_data.request_payload).toEqual({
      ...Object.fromEntries(names.map((name) => [name, SECRET_MASK])),
      nested: [{ seed: SECRET_MASK }],
    });
    const listed = await llm.as(owner, 'GET', MODELS);
    expect(JSON.stringify(listed.body)).not.toContain('value-of-');
  });
});
