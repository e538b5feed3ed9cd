import { randomUUID } from 'node:crypto';
import { events } from '@pack/contracts';
import {
  EventTap,
  publishEvent,
  seededSecret,
  startFakeOpenAi,
  waitFor,
  type FakeProviderServer,
} from '@pack/testkit';
import { modelKnownToOrchestrator, modelOnFakeProvider, startStack, type Stack } from '../stack';

const KEY = seededSecret('the api_key', { prefix: 'sk-e2e-dashboard-SECRET-', suffix: '4242' });

describe('generation and the AI Integration dashboard through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let tap: EventTap;
  let ownerToken: string;
  let amqp: { url: string; namespace: string };

  beforeAll(async () => {
    stack = await startStack();
    fake = await startFakeOpenAi({ apiKey: KEY });
    const { AMQP_URL, BROKER_NAMESPACE } = stack.service('llm-gateway').context.config as {
      AMQP_URL: string;
      BROKER_NAMESPACE: string;
    };
    amqp = { url: AMQP_URL, namespace: BROKER_NAMESPACE };
    tap = await EventTap.start(AMQP_URL, BROKER_NAMESPACE, [events.llmGenerateCompleted.type]);
    ownerToken = await stack.issueToken('service_owner');
  });
  afterAll(async () => {
    await tap?.stop();
    await fake?.close();
    await stack?.stop();
  });

  it('a generate request through the broker shows in the dashboard, to its owner and admins only; hidden charges hide its cost and the model prices', async () => {
    const model = await modelOnFakeProvider(stack, 'E2E generator', fake.url, KEY);
    await modelKnownToOrchestrator(stack, model);
    // The owner's Service and processor: the dashboard shows an owner the calls of their own processors.
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: ownerToken,
      body: { name: 'E2E usage' },
    });
    expect(service.status).toBe(201);
    const processorBody = {
      name: 'E2E usage config',
      service: service.body.id,
      kind: 'config',
      llm_model: model,
      prompt: 'Do config.',
      active: false,
    };
    const processor = await waitFor(
      async () => {
        const res = await stack.call('POST', '/v1/ai/processors/', {
          token: ownerToken,
          body: processorBody,
        });
        return res.status === 201 && res;
      },
      { what: 'the processor' },
    );
    const own = processor.body.id as number;
    await waitFor(() => stack.service('llm-gateway').context.broker.isReady(), { what: 'the broker' });
    // One call by the owner's processor, one by a processor of nobody the owner knows.
    const requestIds = [own, 999_001].map(() => randomUUID());
    for (const [i, processor_id] of [own, 999_001].entries())
      await publishEvent(amqp.url, amqp.namespace, events.llmGenerateRequested, {
        request_id: requestIds[i]!,
        llm_model_id: model,
        messages: [{ role: 'user', content: 'Hello?' }],
        response_schema: null,
        processor_id,
        reply_to: null,
      });
    const results = await tap.waitFor(
      (all) => requestIds.every((id) => all.some((e) => e.data.request_id === id)),
      'the results',
    );
    expect(results.find((e) => e.data.request_id === requestIds[0])!.data).toMatchObject({
      ok: true,
      cost: '0.000006',
      output: 'Hello from the fake provider.',
    });

    const dashboard = (token?: string) =>
      stack.call('GET', '/v1/ai/dashboard/?group_by=model', token === undefined ? {} : { token });
    // The rollup is written right after the result is published (0018): wait for it.
    const seen = await waitFor(
      async () => {
        const read = await dashboard();
        return read.body.totals?.calls === 2 && read;
      },
      { what: 'the calls in the dashboard' },
    );
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ currency: 'USD', costs_hidden: false });
    expect(seen.body.groups).toContainEqual(
      expect.objectContaining({
        key: model,
        calls: 2,
        errors: 0,
        input_tokens: 24,
        output_tokens: 14,
        cost: '0.000012',
      }),
    );
    // The owner sees their own processor's call only (once the Service and processor events are in).
    const mine = await waitFor(
      async () => {
        const read = await dashboard(ownerToken);
        return read.body.totals?.calls === 1 && read;
      },
      { what: "the owner's call in the owner's dashboard" },
    );
    expect(mine.body.totals).toMatchObject({ calls: 1, input_tokens: 12, cost: '0.000006' });
    const other = await dashboard(await stack.issueToken('service_owner'));
    expect(other.body.totals.calls).toBe(0);
    expect(other.body.groups).toEqual([]);

    const patch = { charges: { ENABLED: true, hide_for_serviceowners: true }, currency: { currency: 'EUR' } };
    expect((await stack.call('PATCH', '/v1/core/general_settings/', { body: patch })).status).toBe(200);
    const hidden = await waitFor(
      async () => {
        const res = await dashboard(ownerToken);
        return res.body.costs_hidden === true ? res : undefined;
      },
      { what: 'the llm gateway to apply the charges settings' },
    );
    expect(hidden.body).toMatchObject({ currency: null, totals: { calls: 1, cost: null } });
    expect(hidden.body.groups[0]).toMatchObject({ key: model, calls: 1, cost: null });
    // Prices follow the charges settings: from them and the token counts, costs could be recomputed.
    const asOwner = await stack.call('GET', `/v1/ai/llm_models/${model}/`, { token: ownerToken });
    expect(asOwner.body).toMatchObject({ input_price_per_1m_tokens: null, output_price_per_1m_tokens: null });
    // An admin still sees every call's cost, in the currency the calls were made in (amounts are
    // never converted) while the setting names EUR for new calls, and the prices.
    expect((await dashboard()).body).toMatchObject({
      currency: 'EUR',
      totals: { calls: 2, cost: '0.000012', currency: 'USD', costs: [{ currency: 'USD', cost: '0.000012' }] },
    });
    expect((await stack.call('GET', `/v1/ai/llm_models/${model}/`)).body).toMatchObject({
      input_price_per_1m_tokens: '0.15',
    });
  });

  it('Currency ENABLED off: the same costs are shown with no currency named; on again, the chosen one', async () => {
    const settings = (body: unknown) => stack.call('PATCH', '/v1/core/general_settings/', { body });
    expect((await settings({ currency: { ENABLED: false, currency: 'GBP' } })).status).toBe(200);
    try {
      const plain = await waitFor(
        async () => {
          const res = await stack.call('GET', '/v1/ai/dashboard/?group_by=model');
          return res.body.costs_hidden === false && res.body.currency === null ? res : undefined;
        },
        { what: 'the llm gateway to apply the Currency setting' },
      );
      // The previous test's two priced calls: costs still there, only the currency is gone.
      expect(plain.body).toMatchObject({ currency: null, totals: { calls: 2, cost: '0.000012' } });
    } finally {
      expect((await settings({ currency: { ENABLED: true } })).status).toBe(200);
    }
    await waitFor(
      async () => (await stack.call('GET', '/v1/ai/dashboard/?group_by=model')).body.currency === 'GBP',
      { what: 'the chosen currency back' },
    );
  });

  /** The Currency setting, applied by the llm-gateway (the dashboard names it). */
  async function useCurrency(currency: string) {
    const body = { currency: { ENABLED: true, currency } };
    expect((await stack.call('PATCH', '/v1/core/general_settings/', { body })).status).toBe(200);
    await waitFor(
      async () => (await stack.call('GET', '/v1/ai/dashboard/?group_by=model')).body.currency === currency,
      { what: `the llm gateway to apply the currency ${currency}` },
    );
  }

  const testConnection = (model: number) =>
    stack.call('POST', `/v1/ai/llm_models/test_connection/${model}/`, { body: {} });

  it("connection tests, which the provider bills, are calls of their own kind: the dashboard lists their tokens, cost from the profile's prices and currency; generation totals unchanged", async () => {
    await useCurrency('EUR');
    const before = (await stack.call('GET', '/v1/ai/dashboard/?group_by=model')).body;
    const model = await modelOnFakeProvider(stack, 'E2E tested model', fake.url, KEY);
    fake.scriptReplies({
      text: 'pong',
      usage: { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020 },
    });
    const tested = await testConnection(model);
    // 1000 x 0.15 / 1e6 + 20 x 0.6 / 1e6
    expect(tested.body).toMatchObject({
      ok: true,
      usage: { input_tokens: 1000, output_tokens: 20 },
      cost: '0.000162',
      currency: 'EUR',
    });
    // A test the provider refuses (a wrong key) is a failed call of the same kind.
    const refused = await modelOnFakeProvider(stack, 'E2E refused model', fake.url, 'sk-wrong-key-0000');
    expect((await testConnection(refused)).status).toBe(502);

    // The test is recorded before it answers: no wait.
    const after = await stack.call('GET', '/v1/ai/dashboard/?group_by=model');
    expect(after.status).toBe(200);
    expect(after.body.connection_tests.totals).toMatchObject({
      calls: 2,
      errors: 1,
      input_tokens: 1000,
      output_tokens: 20,
      cost: '0.000162',
      currency: 'EUR',
      costs: [{ currency: 'EUR', cost: '0.000162' }],
    });
    expect(after.body.connection_tests.groups).toEqual([
      expect.objectContaining({
        key: model,
        calls: 1,
        errors: 0,
        input_tokens: 1000,
        cost: '0.000162',
        currency: 'EUR',
      }),
      expect.objectContaining({
        key: refused,
        calls: 1,
        errors: 1,
        input_tokens: 0,
        cost: '0',
        currency: 'EUR',
      }),
    ]);
    // Generations are as they were: the tests are in neither their totals nor their groups.
    expect(after.body.totals).toEqual(before.totals);
    expect(after.body.groups).toEqual(before.groups);
    // Tests belong to no processor: a service owner sees none.
    const asOwner = await stack.call('GET', '/v1/ai/dashboard/?group_by=model', { token: ownerToken });
    expect(asOwner.body.connection_tests).toMatchObject({ totals: { calls: 0 }, groups: [] });
  });

  it('costs made in different currencies are never added: each cost figure lists one sum per currency', async () => {
    const model = await modelOnFakeProvider(stack, 'E2E two currencies', fake.url, KEY);
    const usage = { prompt_tokens: 2000, completion_tokens: 10, total_tokens: 2010 };
    // 2000 x 0.15 / 1e6 + 10 x 0.6 / 1e6 each
    await useCurrency('EUR');
    fake.scriptReplies({ text: 'pong', usage });
    expect((await testConnection(model)).body).toMatchObject({ cost: '0.000306', currency: 'EUR' });
    await useCurrency('GBP');
    fake.scriptReplies({ text: 'pong', usage });
    expect((await testConnection(model)).body).toMatchObject({ cost: '0.000306', currency: 'GBP' });

    const read = await stack.call('GET', '/v1/ai/dashboard/?group_by=model');
    expect(read.body.currency).toBe('GBP');
    const group = read.body.connection_tests.groups.find((entry: { key: number }) => entry.key === model);
    expect(group).toMatchObject({
      calls: 2,
      input_tokens: 4000,
      cost: null,
      currency: null,
      costs: [
        { currency: 'EUR', cost: '0.000306' },
        { currency: 'GBP', cost: '0.000306' },
      ],
    });
    // The earlier generations keep the currency they were made in.
    expect(read.body.totals).toMatchObject({
      currency: 'USD',
      costs: [{ currency: 'USD', cost: '0.000012' }],
    });
  });
});
