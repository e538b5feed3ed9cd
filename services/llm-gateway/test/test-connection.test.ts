import {
  CEILINGS,
  LogCapture,
  startFakeAnthropic,
  startFakeAssistants,
  startFakeGemini,
  startFakeGenai,
  startFakeOpenAi,
  seededSecret,
  type FakeProviderServer,
} from '@pack/testkit';
import { admin, LlmGatewayHarness, startLlmGateway, MODELS, owner } from './harness';

const KEY = seededSecret('the api_key', { prefix: 'sk-conn-test-SECRET-' });
const CREDENTIALS = `Basic ${seededSecret('the genai credentials', { length: 40 })}`;
const LOOPBACK = { PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,::1/128' };

const priced = { prompt: 'Be brief.', input_price_per_1m_tokens: '0.15', output_price_per_1m_tokens: '0.6' };

describe('POST /v1/ai/llm_models/test_connection/<id>/', () => {
  let llm: LlmGatewayHarness;
  let logs: LogCapture;
  const fakes: FakeProviderServer[] = [];
  const started = async <T extends FakeProviderServer>(fake: Promise<T>): Promise<T> => {
    const server = await fake;
    fakes.push(server);
    return server;
  };

  beforeAll(async () => {
    logs = new LogCapture();
    llm = await startLlmGateway({ env: { ...LOOPBACK, LOG_LEVEL: 'debug' }, logDestination: logs });
  });
  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
    await llm.stop();
  });

  const testOf = (id: number, body: unknown = {}, principal = admin) =>
    llm.as(principal, 'POST', `${MODELS}test_connection/${id}/`, body);

  let counter = 0;
  async function vendor1Model(
    fake: FakeProviderServer,
    fields: Record<string, unknown> = {},
  ): Promise<number> {
    counter += 1;
    const created = await llm.create({
      name: `openai ${counter}`,
      provider: 'vendor1',
      model_name: 'gpt-4o-mini',
      timeout: 5,
      ...priced,
      extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      ...fields,
    });
    expect(created.status).toBe(201);
    return (created.body as { id: number }).id;
  }

  function expectNoKey(...texts: string[]) {
    for (const text of texts) expect(text).not.toContain('SECRET');
  }

  it('passes for vendor1 with the reply, usage and an exact cost', async () => {
    const fake = await started(startFakeOpenAi({ apiKey: KEY }));
    const id = await vendor1Model(fake);
    const res = await testOf(id);
    expect(res.status).toBe(200);
    // The fake's usage: 12 in, 7 out at 0.15 and 0.6 per million.
    expect(res.body).toMatchObject({
      ok: true,
      reply_excerpt: 'Hello from the fake provider.',
      usage: { input_tokens: 12, output_tokens: 7 },
      cost: '0.000006',
      currency: 'USD',
    });
    const sent = fake.requests.at(-1)?.body as { max_tokens?: number; max_completion_tokens?: number };
    expect(sent.max_completion_tokens ?? sent.max_tokens).toBeGreaterThanOrEqual(16);
    // Stored before the answer, as a call of its own kind with its prices and currency.
    const record = await llm.service.context.mongo.connection
      .collection('llm_calls')
      .findOne({ kind: 'connection_test', model_id: id });
    expect(record).toMatchObject({
      outcome: 'ok',
      input_tokens: 12,
      output_tokens: 7,
      input_price_per_1m_tokens: '0.15',
      output_price_per_1m_tokens: '0.6',
      cost: '0.000006',
      currency: 'USD',
      attempts: 1,
    });
  });

  it('passes for vendor2, vendor3, genai and vendor1_assistant', async () => {
    const anthropic = await started(startFakeAnthropic({ apiKey: KEY }));
    const gemini = await started(startFakeGemini({ apiKey: KEY }));
    const genai = await started(startFakeGenai({ credentials: CREDENTIALS }));
    const assistants = await started(startFakeAssistants({ apiKey: KEY, assistantId: 'asst_1' }));
    const bodies = [
      { provider: 'vendor2', extra_data: { api_key: KEY, base_url: anthropic.url } },
      { provider: 'vendor3', extra_data: { api_key: KEY, base_url: gemini.url } },
      {
        provider: 'genai',
        extra_data: {
          token_url: genai.tokenUrl,
          request_url: genai.requestUrl,
          credentials: CREDENTIALS,
          verify_ssl: false,
          request_payload: { temperature: 0 },
        },
      },
      {
        provider: 'vendor1_assistant',
        extra_data: {
          VENDOR1_API_KEY: KEY,
          VENDOR1_ASSISTANT_ID: 'asst_1',
          base_url: `${assistants.url}/v1`,
        },
      },
    ];
    for (const body of bodies) {
      const created = await llm.create({ name: body.provider, model_name: 'm', timeout: 10, ...body });
      expect(created.status).toBe(201);
      const res = await testOf((created.body as { id: number }).id);
      expect({ provider: body.provider, status: res.status }).toEqual({
        provider: body.provider,
        status: 200,
      });
      expect((res.body as { reply_excerpt: string }).reply_excerpt.length).toBeGreaterThan(0);
      expect(res.body).toMatchObject({ ok: true, cost: { unpriced: true } });
    }
  });

  it('fails with 502 on an empty reply and on a 200 carrying an error', async () => {
    const fake = await started(startFakeOpenAi({ apiKey: KEY }));
    const id = await vendor1Model(fake);
    fake.next({ fault: { kind: 'empty' } });
    const empty = await testOf(id);
    expect(empty.status).toBe(502);
    expect((empty.body as { detail: string }).detail).toMatch(/empty/);
    fake.next({ fault: { kind: 'error_in_200', message: 'model overloaded' } });
    const errorBody = await testOf(id);
    expect(errorBody.status).toBe(502);
    expect((errorBody.body as { detail: string }).detail).toMatch(/model overloaded/);
  });

  it('answers 504 once the model timeout has passed', async () => {
    const fake = await started(startFakeOpenAi({ apiKey: KEY }));
    const id = await vendor1Model(fake, { timeout: 1 });
    // The provider never answers while the test runs: the model's own timeout ends the test.
    fake.always({ latencyMs: CEILINGS.hang });
    const res = await testOf(id);
    expect(res.status).toBe(504);
    expect((res.body as { detail: string }).detail).toMatch(/within the model timeout of 1 s/);
  });

  it('retries a 429 after its Retry-After, and never a 400', async () => {
    const fake = await started(startFakeOpenAi({ apiKey: KEY }));
    const id = await vendor1Model(fake);
    fake.next({ fault: { kind: 'status', status: 429, retryAfter: '1' } });
    const began = Date.now();
    const retried = await testOf(id);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ attempts: 2 });
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_000);
    expect(fake.requests).toHaveLength(2);

    fake.next({ fault: { kind: 'status', status: 400, message: 'bad parameter' } });
    const refused = await testOf(id);
    expect(refused.status).toBe(502);
    expect((refused.body as { detail: string }).detail).toMatch(/400/);
    expect(fake.requests).toHaveLength(3);
  });

  it('uses an override body for the test only, a masked key meaning the stored one', async () => {
    const fake = await started(startFakeOpenAi({ apiKey: KEY }));
    const id = await vendor1Model(fake);
    const masked = ((await llm.read(id)).body as { extra_data: { api_key: string } }).extra_data.api_key;
    const res = await testOf(id, { model_name: 'gpt-other', extra_data: { api_key: masked } });
    expect(res.status).toBe(200);
    expect((fake.requests.at(-1)?.body as { model: string }).model).toBe('gpt-other');
    expect((await llm.read(id)).body).toMatchObject({ model_name: 'gpt-4o-mini' });
    await testOf(id);
    expect((fake.requests.at(-1)?.body as { model: string }).model).toBe('gpt-4o-mini');
  });

  it('never shows the key, even when the provider echoes it', async () => {
    const fake = await started(startFakeOpenAi({ apiKey: 'sk-the-right-one-0000' }));
    const id = await vendor1Model(fake);
    const res = await testOf(id);
    expect(res.status).toBe(502);
    expect((res.body as { detail: string }).detail).toMatch(/401/);
    expectNoKey(JSON.stringify(res.body), logs.text);
    expect(fake.requests.length).toBeGreaterThan(0);
  });

  it('an admin gets the provider text with every fragment of genai credentials and request_payload values removed, in the answer and the log', async () => {
    const genai = await started(startFakeGenai({ credentials: CREDENTIALS }));
    const token = 'pt-9Xq2Lm7Rv4Kd8Wz3Hs6Jc1Nf5Bg0TyQ';
    const created = await llm.create({
      name: 'genai echo',
      provider: 'genai',
      model_name: 'm',
      timeout: 5,
      extra_data: {
        token_url: genai.tokenUrl,
        request_url: genai.requestUrl,
        credentials: CREDENTIALS,
        verify_ssl: true,
        request_payload: { temperature: 0, extra: { headers: { 'x-auth-token': token } } },
      },
    });
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    const echoes = [
      `credentials ${CREDENTIALS.slice(6, 32)} refused`,
      `unknown ${CREDENTIALS.toLowerCase()}`,
      `see ?c=${encodeURIComponent(CREDENTIALS)}`,
      `${'x'.repeat(150)} token ${token}`,
      JSON.stringify({ token: token.toUpperCase() }),
    ];
    for (const echoed of echoes) {
      genai.next({ fault: { kind: 'status', status: 403, message: echoed } });
      const res = await testOf(id);
      expect(res.status).toBe(502);
      const detail = (res.body as { detail: string }).detail;
      expect(detail).toMatch(/HTTP 403: .*\*\*\*/);
      for (const secret of [CREDENTIALS.slice(6), token])
        for (let i = 0; i + 6 <= secret.length; i++) {
          const fragment = secret.slice(i, i + 6).toLowerCase();
          expect(detail.toLowerCase()).not.toContain(fragment);
          expect(logs.text.toLowerCase()).not.toContain(fragment);
        }
    }
  });

  it('a reply echoing the key comes back without it, removed before the excerpt is cut', async () => {
    const fake = await started(startFakeOpenAi({ apiKey: KEY }));
    const id = await vendor1Model(fake);
    fake.scriptReplies(`${'y'.repeat(180)} your key is ${KEY.toUpperCase()}`);
    const res = await testOf(id);
    expect(res.status).toBe(200);
    expect((res.body as { reply_excerpt: string }).reply_excerpt).toBe(`${'y'.repeat(180)} your key is ***`);
  });

  it("opens the model's breaker after repeated 5xx, visible in the reply and the metrics; a passing test of the stored model closes it", async () => {
    const fake = await started(startFakeOpenAi({ apiKey: KEY }));
    const id = await vendor1Model(fake);
    const healthy = await testOf(id);
    expect(healthy.body).toMatchObject({ ok: true, breaker: 'closed' });
    fake.always({ fault: { kind: 'status', status: 503 } });
    // The first test fails all three attempts; the second fills the window and opens the breaker.
    expect((await testOf(id)).status).toBe(502);
    const second = await testOf(id);
    expect(second.status).toBe(502);
    expect((second.body as { detail: string }).detail).toMatch(/breaker.*open/);
    // Open, a test still asks the provider: it must not call a model broken that works again.
    const callsWhenOpen = fake.requests.length;
    const stillFailing = await testOf(id);
    expect((stillFailing.body as { detail: string }).detail).toMatch(/breaker.*open/);
    expect(fake.requests.length).toBeGreaterThan(callsWhenOpen);

    const text = await (await fetch(`${llm.service.url}/metrics`)).text();
    expect(text).toMatch(new RegExp(`^llm_breaker_state\\{[^}]*model_id="${id}"[^}]*\\} 2$`, 'm'));
    expect(text).toMatch(new RegExp(`^llm_retries_total\\{[^}]*model_id="${id}"[^}]*\\} [1-9]`, 'm'));
    expect(text).toMatch(
      new RegExp(`^llm_errors_total\\{[^}]*model_id="${id}"[^}]*kind="http_status"[^}]*\\} [1-9]`, 'm'),
    );
    expect(text).toMatch(new RegExp(`^llm_input_tokens_total\\{[^}]*model_id="${id}"[^}]*\\} 12$`, 'm'));

    // The provider recovers. A test with an overridden field passes but says nothing of the
    // stored model: the breaker stays open. A test of the stored model closes it.
    fake.always({});
    const overridden = await testOf(id, { model_name: 'gpt-4o' });
    expect(overridden.body).toMatchObject({ ok: true, breaker: 'open' });
    const stored = await testOf(id);
    expect(stored.body).toMatchObject({ ok: true, breaker: 'closed' });
    const after = await (await fetch(`${llm.service.url}/metrics`)).text();
    expect(after).toMatch(new RegExp(`^llm_breaker_state\\{[^}]*model_id="${id}"[^}]*\\} 0$`, 'm'));
  });

  it('is for admins only and 404 for an unknown model', async () => {
    const fake = await started(startFakeOpenAi({ apiKey: KEY }));
    const id = await vendor1Model(fake);
    expect((await testOf(id, {}, owner)).status).toBe(403);
    expect((await testOf(999_999)).status).toBe(404);
    expect(fake.requests).toHaveLength(0);
  });
});

// The connect-time refusal of a target the guard no longer allows: model-targets.test.ts.
