import { events, type EventData, type EventDefinition, type Principal } from '@pack/contracts';
import { FakeSettings, publishEvent, startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { admin, LlmGatewayHarness, startLlmGateway, MODELS, otherOwner, owner } from './harness';
import { KEY, LOOPBACK, Requester, vendor1Model } from './generate-helpers';

const DASHBOARD = '/v1/ai/dashboard/';
/** Owns Service 42; `owner` (id 2) owns Service 41. */

describe('the dashboard is scoped like the rest of the API (spec section 5: owners see their own)', () => {
  let llm: LlmGatewayHarness;
  let requester: Requester;
  let settings: FakeSettings;
  let fake: FakeProviderServer;
  let model: number;

  const publish = <D extends EventDefinition>(event: D, data: EventData<D>) =>
    publishEvent(llm.env.AMQP_URL!, llm.env.BROKER_NAMESPACE!, event, data);
  const dashboard = (groupBy: string, principal: Principal) =>
    llm.as(principal, 'GET', `${DASHBOARD}?group_by=${groupBy}`);

  beforeAll(async () => {
    settings = await new FakeSettings().start();
    llm = await startLlmGateway({ env: { ...LOOPBACK, SETTINGS_URL: settings.url } });
    requester = await Requester.start(llm);
    fake = await startFakeOpenAi({ apiKey: KEY });
    model = await vendor1Model(llm, fake);
    for (const [service_id, ownerOf] of [
      [41, owner],
      [42, otherOwner],
    ] as const)
      await publish(events.serviceChanged, {
        service_id,
        name: `service ${service_id}`,
        owner: { id: ownerOf.id, name: ownerOf.username },
        deleted: false,
        version: 1,
      });
    for (const [processor_id, service_id] of [
      [501, 41],
      [502, 42],
    ] as const)
      await publish(events.processorCreated, {
        processor_id,
        service_id,
        kind: 'config' as const,
        llm_model_id: model,
        active: true,
        deleted: false,
        version: 1,
      });
    // Calls: 2 by owner's processor 501, 3 by the other owner's 502, 1 without a processor.
    const requests = [501, 501, 502, 502, 502, null].map((processor_id) =>
      requester.request(model, { processor_id }),
    );
    for (const request of requests) await requester.publish(request);
    await requester.results(requests.map((r) => r.request_id));
    await waitFor(async () => (await dashboard('model', admin)).body.totals?.calls === 6, {
      what: 'every call in the rollups',
    });
  });
  afterAll(async () => {
    await requester.stop();
    await fake.close();
    await llm.stop();
    await settings.stop();
  });

  it.each(['processor', 'model', 'day'])(
    'group_by=%s: a service owner sees only the calls of their own processors, an admin every call',
    async (groupBy) => {
      const mine = await waitFor(async () => {
        const res = await dashboard(groupBy, owner);
        return res.body.totals?.calls === 2 && res;
      });
      expect(mine.status).toBe(200);
      const theirs = await waitFor(async () => {
        const res = await dashboard(groupBy, otherOwner);
        return res.body.totals?.calls === 3 && res;
      });
      const all = await dashboard(groupBy, admin);
      expect(all.body.totals.calls).toBe(6);
      const keysOf = (body: { groups: { key: unknown; calls: number }[] }) =>
        body.groups.map((group) => [group.key, group.calls]);
      if (groupBy === 'processor') {
        expect(keysOf(mine.body)).toEqual([[501, 2]]);
        expect(keysOf(theirs.body)).toEqual([[502, 3]]);
        expect(keysOf(all.body)).toEqual([
          [501, 2],
          [502, 3],
          [null, 1],
        ]);
      } else {
        expect(mine.body.groups.map((group: { calls: number }) => group.calls)).toEqual([2]);
        expect(theirs.body.groups.map((group: { calls: number }) => group.calls)).toEqual([3]);
      }
    },
  );

  it('with charges hidden from owners, model prices are hidden wherever costs are', async () => {
    await settings.change(llm.env.AMQP_URL!, llm.env.BROKER_NAMESPACE!, (document) => {
      document.charges = { ...document.charges, ENABLED: true, hide_for_serviceowners: true };
    });
    const hidden = await waitFor(async () => {
      const res = await dashboard('model', owner);
      return res.body.costs_hidden === true && res;
    });
    expect(hidden.body.totals.cost).toBeNull();
    const asOwner = await llm.as(owner, 'GET', `${MODELS}${model}/`);
    expect(asOwner.body).toMatchObject({ input_price_per_1m_tokens: null, output_price_per_1m_tokens: null });
    const listed = await llm.as(owner, 'GET', MODELS);
    expect(listed.body.results ?? listed.body.items).toContainEqual(
      expect.objectContaining({
        id: model,
        input_price_per_1m_tokens: null,
        output_price_per_1m_tokens: null,
      }),
    );
    const asAdmin = await llm.as(admin, 'GET', `${MODELS}${model}/`);
    expect(asAdmin.body).toMatchObject({
      input_price_per_1m_tokens: '0.15',
      output_price_per_1m_tokens: '0.6',
    });
  });
});
