import { events } from '@pack/contracts';
import { EventTap, startFakeOpenAi, type FakeProviderServer, type TappedEvent } from '@pack/testkit';
import { startLlmGateway, type LlmGatewayHarness } from './harness';
import { KEY, LOOPBACK, Requester, vendor1Model } from './generate-helpers';

/**
 * docs/decisions/0036: the requester names the kind of its request (`reply_kind`); the result
 * echoes it and goes out under that kind's event type (its routing key), so only the queues bound
 * to that kind receive it.
 */
describe('generate results published by kind', () => {
  let llm: LlmGatewayHarness;
  let requester: Requester;
  let fake: FakeProviderServer;
  const taps: Record<string, EventTap> = {};
  let model: number;

  const ofRequest = (all: TappedEvent[], id: string) =>
    all.filter((event) => (event.data as { request_id: string }).request_id === id);

  beforeAll(async () => {
    llm = await startLlmGateway({ env: LOOPBACK });
    requester = await Requester.start(llm);
    fake = await startFakeOpenAi({ apiKey: KEY });
    const { AMQP_URL, BROKER_NAMESPACE } = llm.env;
    for (const event of [
      events.llmGenerateCompleted,
      events.llmValidationCompleted,
      events.llmOptimizationCompleted,
    ])
      taps[event.type] = await EventTap.start(AMQP_URL!, BROKER_NAMESPACE!, [event.type]);
    model = await vendor1Model(llm, fake);
  });
  afterAll(async () => {
    await Promise.all([requester.stop(), fake.close(), ...Object.values(taps).map((tap) => tap.stop())]);
    await llm.stop();
  });

  it('publishes a validation result as llm.generate.validation_completed.v1 only, with its reply_kind', async () => {
    const request = requester.request(model, { request_id: 'validator-71', reply_kind: 'validation' });
    await requester.publish(request);
    const validation = taps['llm.generate.validation_completed.v1']!;
    const [result] = ofRequest(
      await validation.waitFor((all) => ofRequest(all, 'validator-71').length > 0),
      'validator-71',
    );
    expect(result!.type).toBe('llm.generate.validation_completed.v1');
    expect(result!.data).toMatchObject({
      request_id: 'validator-71',
      reply_kind: 'validation',
      ok: true,
      output: 'Hello from the fake provider.',
    });
    // A request of another kind after it: its result is on the stage key, the validation's is not
    // (both were routed when published; the stage key's queue holds them in that order).
    const probe = requester.request(model, { reply_kind: 'stage' });
    await requester.publish(probe);
    const stageKey = taps['llm.generate.completed.v1']!;
    const seen = await stageKey.waitFor((all) => ofRequest(all, probe.request_id).length > 0);
    expect(ofRequest(seen, probe.request_id)[0]!.data).toMatchObject({ reply_kind: 'stage', ok: true });
    expect(ofRequest(seen, 'validator-71')).toEqual([]);
    expect(ofRequest(await taps['llm.generate.optimization_completed.v1']!.drain(), 'validator-71')).toEqual(
      [],
    );
  });

  it('publishes an optimization result as llm.generate.optimization_completed.v1', async () => {
    const request = requester.request(model, { request_id: 'optimizer-9-1', reply_kind: 'optimization' });
    await requester.publish(request);
    const tap = taps['llm.generate.optimization_completed.v1']!;
    const [result] = ofRequest(
      await tap.waitFor((all) => ofRequest(all, 'optimizer-9-1').length > 0),
      'optimizer-9-1',
    );
    expect(result!.data).toMatchObject({ request_id: 'optimizer-9-1', reply_kind: 'optimization', ok: true });
  });

  it('answers a request without reply_kind as before: llm.generate.completed.v1, no reply_kind (requests in flight during a rolling upgrade)', async () => {
    const request = requester.request(model, { request_id: 'validator-72' });
    expect(request).not.toHaveProperty('reply_kind');
    await requester.publish(request);
    const result = await requester.resultOf(request);
    expect(result).toMatchObject({ request_id: 'validator-72', ok: true });
    expect(result).not.toHaveProperty('reply_kind');
    expect(ofRequest(await taps['llm.generate.validation_completed.v1']!.drain(), 'validator-72')).toEqual(
      [],
    );
  });
});
