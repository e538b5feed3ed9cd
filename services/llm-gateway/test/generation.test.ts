import mongoose from 'mongoose';
import {
  type FakeProviderServer,
  metricsAddedSince,
  metricsText,
  startFakeAnthropic,
  startFakeOpenAi,
  storedCollection,
  waitFor,
} from '@pack/testkit';
import { admin, LlmGatewayHarness, startLlmGateway } from './harness';
import { KEY, LOOPBACK, providerCalls, Requester, vendor1Model } from './generate-helpers';

const SCHEMA = JSON.stringify({
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
});

describe('generation through the broker', () => {
  let llm: LlmGatewayHarness;
  let requester: Requester;
  const fakes: FakeProviderServer[] = [];
  const openAi = async () => {
    const fake = await startFakeOpenAi({ apiKey: KEY });
    fakes.push(fake);
    return fake;
  };

  /**
   * The stored call records, which hold those of `requests` once their results arrived: the
   * llm-gateway stores a call's record before it publishes its result.
   */
  const callRecords = async (requests: { request_id: string }[]) => {
    const records = await storedCollection(llm.service, 'llm_calls');
    for (const request of requests) expect(records.map((r) => r._id)).toContain(request.request_id);
    return records;
  };

  beforeAll(async () => {
    llm = await startLlmGateway({ env: LOOPBACK });
    requester = await Requester.start(llm);
  });
  afterAll(async () => {
    await requester.stop();
    await Promise.all(fakes.map((fake) => fake.close()));
    await llm.stop();
  });

  it('answers a request with the output, usage, exact cost and timings, and keeps a call record', async () => {
    const fake = await openAi();
    const model = await vendor1Model(llm, fake);
    const request = requester.request(model, {
      processor_id: 7,
      reply_to: { pipeline_id: 42, stage: 'CONFIG', run: 1 },
    });
    const before = await metricsText(llm.service.url);
    await requester.publish(request);
    const result = await requester.resultOf(request);
    // The fake's usage: 12 in, 7 out at 0.15 and 0.6 per million = 0.0000018 + 0.0000042.
    expect(result).toMatchObject({
      request_id: request.request_id,
      llm_model_id: model,
      processor_id: 7,
      reply_to: { pipeline_id: 42, stage: 'CONFIG', run: 1 },
      ok: true,
      output: 'Hello from the fake provider.',
      parsed_json: null,
      usage: { input_tokens: 12, output_tokens: 7 },
      cost: '0.000006',
      unpriced: false,
      mode: 'none',
      attempts: 1,
      error: null,
    });
    expect(result.latency_ms).toEqual(expect.any(Number));
    const records = await callRecords([request]);
    expect(records).toContainEqual(
      expect.objectContaining({
        _id: request.request_id,
        state: 'finished',
        outcome: 'ok',
        model_id: model,
        processor_id: 7,
        pipeline_id: 42,
        provider: 'vendor1',
        input_tokens: 12,
        output_tokens: 7,
        input_price_per_1m_tokens: '0.15',
        output_price_per_1m_tokens: '0.6',
        cost: '0.000006',
      }),
    );
    const record = records.find((r) => r._id === request.request_id)!;
    expect(JSON.parse(record.raw_usage_json as string)).toMatchObject({ prompt_tokens: 12 });
    // What this one request added to the metrics.
    const expected = { generations: 1, requests: 1, overheads: 1 };
    const reading = await metricsAddedSince(
      llm.service.url,
      before,
      (added) => ({
        generations: added('llm_generations_total', { provider: 'vendor1', model_id: String(model) }),
        requests: added('llm_requests_total', { provider: 'vendor1', model_id: String(model) }),
        overheads: added('llm_gateway_overhead_seconds_count'),
      }),
      expected,
    );
    expect(reading).toEqual(expected);
  });

  it('waits while another replica holds a request, and takes over one whose lease ran out', async () => {
    const fake = await openAi();
    const model = await vendor1Model(llm, fake);
    const [expired, held] = [requester.request(model), requester.request(model)];
    const claim = (requestId: string, leaseUntil: Date) => ({
      _id: requestId,
      state: 'claimed',
      owner: 'a-replica-that-crashed',
      lease_until: leaseUntil,
      claimed_at: new Date(),
      model_id: model,
      processor_id: null,
      pipeline_id: null,
    });
    const expiredAt = new Date(Date.now() - 1000);
    const heldUntil = new Date(Date.now() + 1500);
    await llm.service.context.mongo.connection
      .collection<{ _id: string }>('llm_call_claims')
      .insertMany([claim(expired.request_id, expiredAt), claim(held.request_id, heldUntil)]);
    await requester.publish(expired);
    await requester.publish(held);
    // The crashed holder may have called the provider: its attempt counts beside ours.
    expect(await requester.resultOf(expired)).toMatchObject({ ok: true, attempts: 2 });
    // Answered only once its lease is over: deferred to the retry queue until then, not dead-lettered.
    expect(await requester.resultOf(held)).toMatchObject({ ok: true, attempts: 2 });
    expect(providerCalls(fake)).toBe(2);
    const records = await callRecords([expired, held]);
    const record = (request: { request_id: string }) => records.find((r) => r._id === request.request_id);
    for (const request of [expired, held])
      expect(record(request)).toMatchObject({
        state: 'finished',
        owner: expect.not.stringMatching(/crashed/),
        attempts: 2,
        takeovers: 1,
        cost: '0.000006',
      });
    // The held request was claimed by this replica (and its provider call made) only after the
    // other's lease ran out.
    expect((record(held)!.claimed_at as Date).getTime()).toBeGreaterThanOrEqual(heldUntil.getTime());
  });

  it('renews its claim while a call outlasts the lease, so another replica waits instead of calling again', async () => {
    // A 300 ms lease and a provider answering in 1.5 s: only the renewals keep the claim live.
    const first = await startLlmGateway({ env: { ...LOOPBACK, LLM_CALL_LEASE_MS: '300' } });
    const second = await first.replica();
    const tapOf = await Requester.start(first);
    try {
      const fake = await openAi();
      fake.always({ latencyMs: 1500 });
      const model = await vendor1Model(first, fake);
      const request = tapOf.request(model);
      await tapOf.publish(request);
      await waitFor(() => fake.requestsTo('/chat/completions').length === 1, { what: 'the provider call' });
      // A copy of the request (as a resend) while the call runs, past several lease lengths.
      await tapOf.publish(request);
      await tapOf.publish(request);
      // Each copy waits for the live claim, then republishes the one result.
      const results = await waitFor(
        async () => {
          const all = await tapOf.results([request.request_id]);
          return all.length === 3 && all;
        },
        { what: 'the result and its two republications' },
      );
      for (const result of results) expect(result.data).toMatchObject({ ok: true, attempts: 1 });
      expect(providerCalls(fake)).toBe(1);
    } finally {
      await tapOf.stop();
      await second.stop();
      await first.stop();
    }
  });

  it('calls the provider once per request id however often it is delivered, with two replicas', async () => {
    const replica = await llm.replica();
    try {
      const fake = await openAi();
      const model = await vendor1Model(llm, fake);
      const requests = Array.from({ length: 10 }, () => requester.request(model));
      // Every request twice, interleaved, so both replicas see copies of the same request id.
      for (const request of [...requests, ...requests]) await requester.publish(request);
      const results = await requester.results(requests.map((r) => r.request_id));
      expect(providerCalls(fake)).toBe(10);
      // Repeats are the same result, republished from the call record.
      for (const request of requests) {
        const copies = results.filter((e) => e.data.request_id === request.request_id).map((e) => e.data);
        for (const copy of copies) expect(copy).toEqual(copies[0]);
        expect(copies[0]).toMatchObject({ ok: true, attempts: 1 });
      }
    } finally {
      await replica.stop();
    }
  });

  it('sends a schema natively to vendor1 and as instructions to vendor2, and returns the parsed JSON', async () => {
    const fake = await openAi();
    fake.scriptReplies('{"answer": "native"}');
    const native = requester.request(await vendor1Model(llm, fake), { response_schema: SCHEMA });
    const anthropic = await startFakeAnthropic({ apiKey: KEY });
    fakes.push(anthropic);
    anthropic.scriptReplies('```json\n{"answer": "text"}\n```');
    const created = await llm.create(
      {
        name: 'messages generator',
        provider: 'vendor2',
        model_name: 'claude-sonnet',
        timeout: 5,
        extra_data: { api_key: KEY, base_url: anthropic.url },
      },
      admin,
    );
    const instructed = requester.request((created.body as { id: number }).id, { response_schema: SCHEMA });
    await requester.publish(native);
    await requester.publish(instructed);
    expect(await requester.resultOf(native)).toMatchObject({
      ok: true,
      mode: 'native',
      parsed_json: '{"answer":"native"}',
    });
    expect(fake.requests.at(-1)?.body).toMatchObject({ response_format: { type: 'json_schema' } });
    // An unpriced model: the cost is unknown, never "0".
    expect(await requester.resultOf(instructed)).toMatchObject({
      ok: true,
      mode: 'instructions',
      parsed_json: '{"answer":"text"}',
      cost: null,
      unpriced: true,
    });
    const sent = anthropic.requests.at(-1)?.body as { messages: { content: string }[] };
    expect(sent.messages.at(-1)?.content).toContain('"answer"');
  });

  it('re-asks once after an invalid reply and bills both calls', async () => {
    const fake = await openAi();
    fake.scriptReplies('{"answer": 5}', '{"answer": "five"}');
    const request = requester.request(await vendor1Model(llm, fake), { response_schema: SCHEMA });
    await requester.publish(request);
    expect(await requester.resultOf(request)).toMatchObject({
      ok: true,
      parsed_json: '{"answer":"five"}',
      attempts: 2,
      usage: { input_tokens: 24, output_tokens: 14 },
      cost: '0.000012',
    });
    expect(providerCalls(fake)).toBe(2);
  });

  it('answers with an error result, never a crash or a loop', async () => {
    const fake = await openAi();
    const model = await vendor1Model(llm, fake);
    const missing = requester.request(999_999);
    const badSchema = requester.request(model, { response_schema: '{"type": "object", "properties": 5}' });
    const notJson = requester.request(model, { response_schema: 'not json' });
    const invalidTwice = requester.request(model, { response_schema: SCHEMA });
    for (const request of [missing, badSchema, notJson]) await requester.publish(request);
    expect(await requester.resultOf(missing)).toMatchObject({
      ok: false,
      output: null,
      usage: null,
      cost: null,
      attempts: 0,
      error: { kind: 'model_not_found', message: 'no LLM model with id 999999' },
    });
    for (const request of [badSchema, notJson])
      expect(await requester.resultOf(request)).toMatchObject({
        ok: false,
        attempts: 0,
        error: { kind: 'invalid_request', message: expect.stringContaining('response_schema') },
      });
    expect(providerCalls(fake)).toBe(0);

    fake.scriptReplies('no json here', '{"answer": 1}');
    await requester.publish(invalidTwice);
    expect(await requester.resultOf(invalidTwice)).toMatchObject({
      ok: false,
      parsed_json: null,
      output: '{"answer": 1}',
      attempts: 2,
      usage: { input_tokens: 24, output_tokens: 14 },
      cost: '0.000012',
      error: { kind: 'structured_output' },
    });

    fake.always({ fault: { kind: 'status', status: 401 } });
    const refused = requester.request(model);
    await requester.publish(refused);
    const result = await requester.resultOf(refused);
    expect(result).toMatchObject({ ok: false, attempts: 1, error: { kind: 'http_status' } });
    expect(JSON.stringify(result)).not.toContain('SECRET');
  });

  it('a provider error reaching the pipeline (and so the service owner) is a classification and the provider code, never its text', async () => {
    const fake = await openAi();
    const model = await vendor1Model(llm, fake);
    // OpenAI's own 401 quotes a fragment of the key; an echoing server quotes it whole.
    fake.always({
      fault: {
        kind: 'status',
        status: 401,
        message: `Incorrect API key provided: ${KEY.slice(0, 10)}****${KEY.slice(-4)}; you sent ${KEY.toLowerCase()}`,
      },
    });
    const refused = requester.request(model, { processor_id: 3 });
    await requester.publish(refused);
    const result = await requester.resultOf(refused);
    expect(result.error).toEqual({
      kind: 'http_status',
      message: 'the provider refused the credentials, HTTP 401 (provider error code invalid_api_key)',
    });
    fake.always({});
  });
});

describe('a call record lingering for others (RECORD_LINGER_MS)', () => {
  let llm: LlmGatewayHarness;
  let requester: Requester;
  let fake: FakeProviderServer;

  beforeAll(async () => {
    // The longest linger: the record's insert waits a second for other records to join it.
    llm = await startLlmGateway({ env: { ...LOOPBACK, RECORD_LINGER_MS: '1000' } });
    requester = await Requester.start(llm);
    fake = await startFakeOpenAi({ apiKey: KEY });
  });
  afterAll(async () => {
    await requester.stop();
    await fake.close();
    await llm.stop();
  });

  it('"every call\'s record durable before its result is published": the record is stored when the result arrives', async () => {
    const model = await vendor1Model(llm, fake);
    const request = requester.request(model, { processor_id: 5 });
    await requester.publish(request);
    const result = await requester.resultOf(request);
    const records = await storedCollection(llm.service, 'llm_calls');
    expect(records.find((record) => record._id === request.request_id)).toMatchObject({
      state: 'finished',
      outcome: 'ok',
      cost: result.cost,
      result: { request_id: request.request_id, output: result.output },
    });
  });
});

describe('rollups written behind the answers (ROLLUP_LINGER_MS)', () => {
  let llm: LlmGatewayHarness;
  let requester: Requester;
  let fake: FakeProviderServer;

  beforeAll(async () => {
    // One request at a time per replica: the next is delivered once the last is acknowledged.
    llm = await startLlmGateway({
      env: { ...LOOPBACK, ROLLUP_LINGER_MS: '1000', LLM_GENERATE_PREFETCH: '1' },
    });
    requester = await Requester.start(llm);
    fake = await startFakeOpenAi({ apiKey: KEY });
  });
  afterAll(async () => {
    await requester.stop();
    await fake.close();
    await llm.stop();
  });

  it('a request is acknowledged once its result is out, not after its rollup: calls one after another share rollup writes', async () => {
    const model = await vendor1Model(llm, fake, { name: 'rollup linger' });
    const requests = Array.from({ length: 5 }, () => requester.request(model, { processor_id: 9 }));
    let rollupWrites = 0;
    llm.service.context.mongo.connection.getClient().on('commandStarted', (event) => {
      if (event.commandName === 'update' && event.command.update === 'llm_call_rollups') rollupWrites += 1;
    });
    for (const request of requests) await requester.publish(request);
    await requester.results(requests.map((request) => request.request_id));
    const rolledUp = async () =>
      (await storedCollection(llm.service, 'llm_call_rollups'))
        .filter((doc) => doc.model_id === model && doc.period === 'hour')
        .reduce((sum, doc) => sum + Number(doc.calls), 0);
    await waitFor(async () => (await rolledUp()) === 5, { what: 'the five calls in the rollups' });
    // Waiting for its rollup before the next request came, each call had a write of its own.
    expect(rollupWrites).toBeLessThan(requests.length);
  });

  it('a stopping replica writes the rollups of the calls it answered without waiting out the linger', async () => {
    const model = await vendor1Model(llm, fake, { name: 'rollup flush' });
    const request = requester.request(model);
    await requester.publish(request);
    await requester.resultOf(request);
    await llm.stop({ keepData: true });
    const database = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName: llm.env.MONGO_DB! })
      .asPromise();
    try {
      const rollups = await database.collection('llm_call_rollups').find({ model_id: model }).toArray();
      expect(rollups.map((doc) => [doc.period, Number(doc.calls)]).sort()).toEqual([
        ['day', 1],
        ['hour', 1],
      ]);
    } finally {
      await database.close();
    }
  });
});
