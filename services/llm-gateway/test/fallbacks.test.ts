/**
 * Fallbacks (docs/decisions/0045): a model names its fallbacks, a call its model cannot
 * answer is answered by the next one, and every call record says which model was asked, which
 * answered, with each model's own prices and cost.
 */
import {
  type FakeProviderServer,
  metricsAddedSince,
  metricsText,
  startFakeOpenAi,
  storedCollection,
  waitFor,
} from '@pack/testkit';
import { admin, LlmGatewayHarness, MODELS, startLlmGateway } from './harness';
import { KEY, LOOPBACK, providerCalls, Requester, vendor1Model } from './generate-helpers';

/** The fake's usage (12 in, 7 out) at the fallback's prices 1 and 2 per million. */
const FALLBACK_COST = '0.000026';
/** The same usage at the asked model's prices 0.15 and 0.6. */
const ASKED_COST = '0.000006';

describe('model fallbacks', () => {
  let llm: LlmGatewayHarness;
  let requester: Requester;
  const fakes: FakeProviderServer[] = [];
  const openAi = async () => {
    const fake = await startFakeOpenAi({ apiKey: KEY });
    fakes.push(fake);
    return fake;
  };
  /** An asked model on one fake provider and a priced fallback on another. */
  const pair = async (asked: Record<string, unknown> = {}) => {
    const [first, second] = [await openAi(), await openAi()];
    const fallback = await vendor1Model(llm, second, {
      input_price_per_1m_tokens: '1',
      output_price_per_1m_tokens: '2',
    });
    const model = await vendor1Model(llm, first, { ...asked, fallback_models: [fallback] });
    return { first, second, model, fallback };
  };
  const recordsOf = (requestId: string, count: number) =>
    waitFor(
      async () => {
        const all = await storedCollection(llm.service, 'llm_calls');
        const mine = all.filter((r) => String(r._id).startsWith(requestId));
        return mine.length === count && mine.sort((a, b) => String(a._id).localeCompare(String(b._id)));
      },
      { what: `${count} call record(s) of ${requestId}` },
    );
  /** What `pack_llm_fallbacks_total{from,to,reason}` added since `before`, once it is `expected`. */
  const fallbacksCounted = (before: string, from: number, to: number, reason: string, expected = 1) =>
    metricsAddedSince(
      llm.service.url,
      before,
      (added) => added('pack_llm_fallbacks_total', { from: String(from), to: String(to), reason }),
      expected,
    );

  beforeAll(async () => {
    llm = await startLlmGateway({ env: LOOPBACK });
    requester = await Requester.start(llm);
  });
  afterAll(async () => {
    await requester.stop();
    await Promise.all(fakes.map((fake) => fake.close()));
    await llm.stop();
  });

  it('"fallback_models, an ordered list of up to 3 other model ids ... no cycles, no model listed twice, refused with 400 naming the field otherwise"', async () => {
    const fake = await openAi();
    const [a, b, c, d] = [
      await vendor1Model(llm, fake),
      await vendor1Model(llm, fake),
      await vendor1Model(llm, fake),
      await vendor1Model(llm, fake),
    ];
    const refused = async (id: number, fallback_models: unknown) => {
      const answer = await llm.patch(id, { fallback_models });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const fields = Object.keys(answer.body.errors);
      expect(fields).toHaveLength(1);
      expect(fields[0]).toMatch(/^fallback_models(\.\d+)?$/);
      return (answer.body.errors[fields[0]!] as string[]).join(' ');
    };
    expect(await refused(a, [b, b])).toMatch(/twice/);
    expect(await refused(a, [a])).toMatch(/itself/);
    expect(await refused(a, [b, c, d, 999_999])).toMatch(/3/);
    expect(await refused(a, [999_999])).toMatch(/no LLM model with id 999999/);
    expect(await refused(a, ['b'])).toBeTruthy();

    const ordered = await llm.patch(a, { fallback_models: [c, b] });
    expect(ordered.status).toBe(200);
    expect(ordered.body.fallback_models).toEqual([c, b]);
    expect((await llm.read(a)).body.fallback_models).toEqual([c, b]);
    const listed = await llm.as(admin, 'GET', `${MODELS}?limit=100`);
    expect(listed.body.results.find((m: { id: number }) => m.id === a).fallback_models).toEqual([c, b]);
    // b -> c -> a -> c would loop: refused, with the chain named; nothing changed.
    expect((await llm.patch(c, { fallback_models: [d] })).status).toBe(200);
    expect(await refused(d, [a])).toMatch(new RegExp(`cycle: ${d} -> ${a} -> ${c} -> ${d}`));
    expect((await llm.read(d)).body.fallback_models).toEqual([]);

    // A model that is another's fallback stays (409) until it leaves that list.
    const blocked = await llm.as(admin, 'DELETE', `${MODELS}${b}/`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.detail).toMatch(new RegExp(`fallback of LLM model\\(s\\) ${a}`));
    expect((await llm.patch(a, { fallback_models: [c] })).status).toBe(200);
    expect((await llm.as(admin, 'DELETE', `${MODELS}${b}/`)).status).toBe(204);
  });

  it.each([
    ['HTTP 500', { fault: { kind: 'status', status: 500 } }, 'server_error', 3],
    ['HTTP 429', { fault: { kind: 'status', status: 429, retryAfter: '0' } }, 'rate_limited', 3],
    ['a hang past the timeout', { latencyMs: 2500 }, 'timeout', 1],
  ] as const)(
    '"the stage is answered by the next model in the list": after %s, with both call records and their costs',
    async (_what, behaviour, reason, attempts) => {
      const { first, second, model, fallback } = await pair({ timeout: 1 });
      first.always(behaviour);
      const before = await metricsText(llm.service.url);
      const request = requester.request(model, { processor_id: 3 });
      await requester.publish(request);
      const result = await requester.resultOf(request);
      expect(result).toMatchObject({
        ok: true,
        llm_model_id: model,
        answered_model_id: fallback,
        fallback_from: model,
        output: 'Hello from the fake provider.',
        cost: FALLBACK_COST,
        unpriced: false,
        attempts: attempts + 1,
        error: null,
      });
      expect(providerCalls(second)).toBe(1);
      const [asked, answered] = await recordsOf(request.request_id, 2);
      expect(asked).toMatchObject({
        _id: request.request_id,
        model_id: model,
        asked_model_id: model,
        answered_model_id: fallback,
        fallback_from: null,
        fallbacks: 1,
        outcome: reason === 'timeout' ? 'timeout' : 'http_status',
        input_price_per_1m_tokens: '0.15',
        cost: null,
        attempts,
      });
      expect(answered).toMatchObject({
        _id: `${request.request_id}#fallback-1`,
        model_id: fallback,
        asked_model_id: model,
        answered_model_id: fallback,
        fallback_from: model,
        fallback_reason: reason,
        outcome: 'ok',
        input_price_per_1m_tokens: '1',
        output_price_per_1m_tokens: '2',
        cost: FALLBACK_COST,
        attempts: 1,
      });
      expect(await fallbacksCounted(before, model, fallback, reason)).toBe(1);
    },
  );

  it('"breaker open" moves the call to the fallback without calling the asked model', async () => {
    const { first, second, model, fallback } = await pair();
    first.always({ fault: { kind: 'status', status: 503 } });
    // Two requests of 3 failed attempts each open the asked model's breaker (5 calls, 50 %).
    for (const request of [requester.request(model), requester.request(model)]) {
      await requester.publish(request);
      expect(await requester.resultOf(request)).toMatchObject({ ok: true, answered_model_id: fallback });
    }
    const calledBefore = providerCalls(first);
    const request = requester.request(model);
    await requester.publish(request);
    expect(await requester.resultOf(request)).toMatchObject({
      ok: true,
      answered_model_id: fallback,
      fallback_from: model,
      cost: FALLBACK_COST,
    });
    expect(providerCalls(first)).toBe(calledBefore);
    expect(providerCalls(second)).toBe(3);
    const [asked, answered] = await recordsOf(request.request_id, 2);
    expect(asked).toMatchObject({ outcome: 'breaker_open', attempts: 0, cost: null });
    expect(answered).toMatchObject({ fallback_reason: 'breaker_open', cost: FALLBACK_COST });
  });

  it('a 4xx that any model would return for the same body is not retried on a fallback', async () => {
    const { first, second, model } = await pair();
    first.always({ fault: { kind: 'status', status: 400 } });
    const request = requester.request(model);
    await requester.publish(request);
    expect(await requester.resultOf(request)).toMatchObject({
      ok: false,
      answered_model_id: null,
      fallback_from: null,
      error: { kind: 'http_status' },
    });
    expect(providerCalls(second)).toBe(0);
    await recordsOf(request.request_id, 1);
  });

  it('the asked model answering costs and records what it did before fallbacks', async () => {
    const { second, model } = await pair();
    const request = requester.request(model);
    await requester.publish(request);
    expect(await requester.resultOf(request)).toMatchObject({
      ok: true,
      answered_model_id: model,
      fallback_from: null,
      cost: ASKED_COST,
      attempts: 1,
    });
    expect(providerCalls(second)).toBe(0);
    const [record] = await recordsOf(request.request_id, 1);
    expect(record).toMatchObject({ answered_model_id: model, fallback_from: null, cost: ASKED_COST });
    expect(record!.fallbacks).toBeUndefined();
  });

  it('a chain where every model fails ends with an error listing every attempt, each recorded', async () => {
    const { first, second, model, fallback } = await pair();
    first.always({ fault: { kind: 'status', status: 500 } });
    second.always({ fault: { kind: 'status', status: 502 } });
    const request = requester.request(model);
    await requester.publish(request);
    const result = await requester.resultOf(request);
    expect(result).toMatchObject({
      ok: false,
      answered_model_id: null,
      fallback_from: null,
      cost: null,
      attempts: 6,
      error: { kind: 'http_status' },
    });
    expect((result.error as { message: string }).message).toMatch(
      new RegExp(
        `^model ${model}: the provider failed, HTTP 500[^;]*; ` +
          `fallback model ${fallback}: the provider failed, HTTP 502`,
      ),
    );
    const records = await recordsOf(request.request_id, 2);
    expect(records.map((r) => [r.model_id, r.outcome, r.answered_model_id])).toEqual([
      [model, 'http_status', null],
      [fallback, 'http_status', null],
    ]);
  });
});
