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
    // An admin still sees every call's cost, now in the currency setting, and the prices.
    expect((await dashboard()).body).toMatchObject({
      currency: 'EUR',
      totals: { calls: 2, cost: '0.000012' },
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
});
