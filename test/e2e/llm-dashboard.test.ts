import { randomUUID } from 'node:crypto';
import { events } from '@pack/contracts';
import { EventTap, publishEvent, startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { modelOnFakeProvider, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-dashboard-SECRET-4242';

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

  it('a generate request through the broker shows in the dashboard; hidden charges hide its cost', async () => {
    const model = await modelOnFakeProvider(stack, 'E2E generator', fake.url, KEY);
    const requestId = randomUUID();
    await waitFor(() => stack.service('llm-gateway').context.broker.isReady(), { what: 'the broker' });
    await publishEvent(amqp.url, amqp.namespace, events.llmGenerateRequested, {
      request_id: requestId,
      llm_model_id: model,
      messages: [{ role: 'user', content: 'Hello?' }],
      response_schema: null,
      processor_id: 5,
      reply_to: null,
    });
    const [result] = await tap.waitFor(
      (all) => all.some((e) => e.data.request_id === requestId),
      'the result',
    );
    expect(result!.data).toMatchObject({
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
        return read.body.totals?.calls === 1 && read;
      },
      { what: 'the call in the dashboard' },
    );
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ currency: 'USD', costs_hidden: false });
    expect(seen.body.groups).toContainEqual(
      expect.objectContaining({
        key: model,
        calls: 1,
        errors: 0,
        input_tokens: 12,
        output_tokens: 7,
        cost: '0.000006',
      }),
    );
    expect((await dashboard(ownerToken)).body.totals.cost).toBe('0.000006');

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
    // An admin still sees the cost, now in the currency setting.
    expect((await dashboard()).body).toMatchObject({ currency: 'EUR', totals: { cost: '0.000006' } });
  });
});
