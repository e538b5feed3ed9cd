import {
  outboxDrained,
  startFakeGenai,
  startFakeOpenAi,
  type FakeProviderServer,
  seededSecret,
} from '@pack/testkit';
import { admin, examples, LlmGatewayHarness, startLlmGateway, MODELS } from './harness';
import { Requester } from './generate-helpers';

const KEY = seededSecret('the stored api_key', { prefix: 'sk-tg7Qx2-SECRET-' });
const CREDENTIALS = `Basic ${seededSecret('the genai credentials', { length: 28 })}`;
const OTHER_KEY = seededSecret('the other host api_key', { prefix: 'sk-other-host-key-', suffix: '0000' });
const LOOPBACK = { PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,::1/128' };

/**
 * Forms of link-local and metadata addresses, which model URLs may not reach although private
 * networks are allowed (never connected to).
 */
const REFUSED = [
  'http://169.254.169.254/latest/meta-data/',
  'http://169.254.10.20/',
  'http://0xa9fea9fe/',
  'http://0251.0376.0251.0376/',
  'http://[::ffff:169.254.169.254]/',
  'http://[fd00:ec2::254]/',
  'http://100.100.100.200/',
  '  http://[fe80::1]/  ',
];
/**
 * Numeric shorthands of IPv4 the WHATWG parser reads (hex, octal): the URL's own pattern
 * refuses them, as the OpenAPI document says, before the address guard is asked.
 */
const SHORTHAND = new Set(['http://0xa9fea9fe/', 'http://0251.0376.0251.0376/']);

describe('every URL a model stores passes the address guard webhooks use', () => {
  let llm: LlmGatewayHarness;
  const fakes: FakeProviderServer[] = [];
  let openAi: FakeProviderServer;
  let vendor1Id: number;
  let genaiId: number;

  beforeAll(async () => {
    llm = await startLlmGateway({ env: LOOPBACK });
    openAi = await startFakeOpenAi({ apiKey: KEY });
    fakes.push(openAi);
    const created = await llm.create({
      ...examples.vendor1,
      name: 'guarded vendor1',
      extra_data: { api_key: KEY, base_url: `${openAi.url}/v1` },
    });
    expect(created.status).toBe(201);
    vendor1Id = created.body.id;
    const genai = await startFakeGenai({ credentials: CREDENTIALS });
    fakes.push(genai);
    const g = await llm.create({
      ...examples.genai,
      name: 'guarded genai',
      timeout: 5,
      extra_data: {
        token_url: genai.tokenUrl,
        request_url: genai.requestUrl,
        credentials: CREDENTIALS,
        verify_ssl: true,
        request_payload: { temperature: 0, user: 'svc-user-SECRET-77' },
      },
    });
    expect(g.status).toBe(201);
    genaiId = g.body.id;
    await outboxDrained(llm.service); // the models' events, published before any snapshot is taken
  });
  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
    await llm.stop();
  });

  async function expectRefusedUrl(
    send: () => ReturnType<LlmGatewayHarness['create']>,
    field: string,
    url?: string,
  ) {
    const before = await llm.rawDatabase();
    const answer = await send();
    expect({ status: answer.status, fields: Object.keys(answer.body.errors ?? {}) }).toEqual({
      status: 400,
      fields: [field],
    });
    const [reason] = answer.body.errors[field] as string[];
    expect(reason).toMatch(
      url && SHORTHAND.has(url)
        ? /^must be an http\(s\) URL without credentials, spaces or control characters/
        : /^host .* is .*: model URLs may reach it only if PACK_ALLOWED_TARGET_CIDRS of the llm-gateway service names its range$/,
    );
    expect(await llm.rawDatabase()).toEqual(before);
  }

  const genaiWith = (extra: Record<string, unknown>) => ({
    ...examples.genai,
    name: 'refused genai',
    extra_data: { ...examples.genai.extra_data, ...extra },
  });

  it.each(REFUSED)('POST with base_url %j: 400 naming the rule, nothing stored', async (url) => {
    await expectRefusedUrl(
      () => llm.create({ ...examples.vendor1, name: 'refused', extra_data: { api_key: KEY, base_url: url } }),
      'extra_data.base_url',
      url,
    );
  });

  it.each(REFUSED)('POST with genai token_url or request_url %j: 400 naming the field', async (url) => {
    await expectRefusedUrl(() => llm.create(genaiWith({ token_url: url })), 'extra_data.token_url', url);
    await expectRefusedUrl(() => llm.create(genaiWith({ request_url: url })), 'extra_data.request_url', url);
  });

  it.each(REFUSED)('PATCH with base_url, token_url or request_url %j: 400 naming the field', async (url) => {
    await expectRefusedUrl(
      () => llm.patch(vendor1Id, { extra_data: { base_url: url } }),
      'extra_data.base_url',
      url,
    );
    await expectRefusedUrl(
      () => llm.patch(genaiId, { extra_data: { token_url: url } }),
      'extra_data.token_url',
      url,
    );
    await expectRefusedUrl(
      () => llm.patch(genaiId, { extra_data: { request_url: url } }),
      'extra_data.request_url',
      url,
    );
  });

  it.each(REFUSED)('a connection test overriding base_url with %j: 400, nothing sent', async (url) => {
    const sent = openAi.requests.length;
    await expectRefusedUrl(
      () =>
        llm.as(admin, 'POST', `${MODELS}test_connection/${vendor1Id}/`, {
          extra_data: { api_key: KEY, base_url: url },
        }),
      'extra_data.base_url',
      url,
    );
    expect(openAi.requests.length).toBe(sent);
  });

  it('a URL is stored trimmed and normalised', async () => {
    const port = new URL(openAi.url).port;
    const created = await llm.create({
      ...examples.vendor1,
      name: 'spaces',
      extra_data: { api_key: KEY, base_url: `  HTTP://127.0.0.1:${port}/v1/./  ` },
    });
    expect(created.status).toBe(201);
    expect(created.body.extra_data.base_url).toBe(`http://127.0.0.1:${port}/v1/`);
    const patched = await llm.patch(created.body.id, {
      extra_data: { base_url: ` HTTP://127.0.0.1:${port}/v1 ` },
    });
    expect(patched.body.extra_data.base_url).toBe(`http://127.0.0.1:${port}/v1`);
  });
});

describe('a connection test overriding a URL brings its own secret', () => {
  let llm: LlmGatewayHarness;
  let stored: FakeProviderServer;
  let elsewhere: FakeProviderServer;
  let id: number;
  const testOf = (body: unknown) => llm.as(admin, 'POST', `${MODELS}test_connection/${id}/`, body);

  beforeAll(async () => {
    llm = await startLlmGateway({ env: LOOPBACK });
    stored = await startFakeOpenAi({ apiKey: KEY });
    elsewhere = await startFakeOpenAi({ apiKey: OTHER_KEY });
    const created = await llm.create({
      ...examples.vendor1,
      name: 'override',
      timeout: 5,
      extra_data: { api_key: KEY, base_url: `${stored.url}/v1` },
    });
    id = created.body.id;
  });
  afterAll(async () => {
    await Promise.all([stored.close(), elsewhere.close()]);
    await llm.stop();
  });

  it('another base_url without the api_key, or with its mask: 400 naming api_key, nothing sent anywhere', async () => {
    const masked = (await llm.read(id)).body.extra_data.api_key as string;
    for (const extra of [{}, { api_key: masked }]) {
      const res = await testOf({ extra_data: { ...extra, base_url: `${elsewhere.url}/v1` } });
      expect({ status: res.status, fields: Object.keys(res.body.errors ?? {}) }).toEqual({
        status: 400,
        fields: ['extra_data.api_key'],
      });
    }
    expect(elsewhere.requests).toHaveLength(0);
    expect(stored.requests).toHaveLength(0);
  });

  it('another base_url with its own api_key is tested with that key', async () => {
    const res = await testOf({
      extra_data: { api_key: OTHER_KEY, base_url: `${elsewhere.url}/v1` },
    });
    expect(res.status).toBe(200);
    expect(elsewhere.requests.at(-1)?.headers.authorization).toBe(`Bearer ${OTHER_KEY}`);
  });

  it('the stored base_url sent again (spaces around it) uses the stored key', async () => {
    const res = await testOf({ extra_data: { base_url: `  ${stored.url}/v1 ` } });
    expect(res.status).toBe(200);
    expect(stored.requests.at(-1)?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('genai: another request_url needs the credentials and the request_payload again', async () => {
    const genai = await startFakeGenai({ credentials: CREDENTIALS });
    try {
      const created = await llm.create({
        ...examples.genai,
        name: 'genai override',
        timeout: 5,
        extra_data: {
          token_url: genai.tokenUrl,
          request_url: genai.requestUrl,
          credentials: CREDENTIALS,
          verify_ssl: true,
          request_payload: { user: 'svc-user-SECRET-77' },
        },
      });
      const res = await llm.as(admin, 'POST', `${MODELS}test_connection/${created.body.id}/`, {
        extra_data: { request_url: `${elsewhere.url}/v1/chat/completions` },
      });
      expect({ status: res.status, fields: Object.keys(res.body.errors ?? {}).sort() }).toEqual({
        status: 400,
        fields: ['extra_data.credentials', 'extra_data.request_payload'],
      });
      expect(genai.requests).toHaveLength(0);
    } finally {
      await genai.close();
    }
  });
});

describe('the guard is applied again at connect time', () => {
  it('a model stored while loopback was allowed is refused once it is not, naming the reason', async () => {
    const allowing = await startLlmGateway({ env: LOOPBACK });
    const fake = await startFakeOpenAi({ apiKey: KEY });
    let refusing: LlmGatewayHarness | undefined;
    try {
      const created = await allowing.create({
        ...examples.vendor1,
        name: 'loopback',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      });
      expect(created.status).toBe(201);
      await allowing.stop({ keepData: true });
      refusing = await allowing.replica({
        env: { PACK_ALLOWED_TARGET_CIDRS: '', PACK_MODEL_PRIVATE_TARGETS: 'false' },
      });
      const res = await refusing.as(admin, 'POST', `${MODELS}test_connection/${created.body.id}/`, {});
      expect(res.status).toBe(502);
      const detail = (res.body as { detail: string }).detail;
      expect(detail).toMatch(/refused to connect to 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/);
      expect(detail).toContain(
        'set PACK_MODEL_PRIVATE_TARGETS=true or name its range in PACK_ALLOWED_TARGET_CIDRS of the llm-gateway service',
      );
      expect(fake.requests).toHaveLength(0);
      // A refusal is the model's configuration, not the provider's health: no retry.
      const text = await (await fetch(`${refusing.service.url}/metrics`)).text();
      expect(text).not.toMatch(/^llm_retries_total\{[^}]*\} [1-9]/m);
      // A generation (whose result reaches the owner's pipeline) names the reason too.
      const requester = await Requester.start(refusing);
      try {
        const request = requester.request(created.body.id);
        await requester.publish(request);
        expect((await requester.resultOf(request)).error).toEqual({
          kind: 'network',
          message:
            "the platform refused to connect to the provider's address: 127.0.0.1 is a loopback address; set PACK_MODEL_PRIVATE_TARGETS=true or name its range in PACK_ALLOWED_TARGET_CIDRS of the llm-gateway service",
        });
      } finally {
        await requester.stop();
      }
      expect(fake.requests).toHaveLength(0);
    } finally {
      await fake.close();
      await (refusing ?? allowing).stop();
    }
  });
});
