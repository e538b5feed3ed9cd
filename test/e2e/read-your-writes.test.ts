import { startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { modelKnownToOrchestrator, modelOnFakeProvider, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-ryw-0000';
const ROUNDS = 20;

/**
 * What was just created exists everywhere at once for the one who created it. A
 * service that does not hold another service's record in its projection yet asks the owner
 * (an internal read signed like every call behind the gateway) before answering that it does
 * not exist, and keeps what it learns. The same for the orchestrator's Service
 * Items (a trigger, retrigger or push right after the declaration that approved the item).
 */
describe('read-your-writes across services, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let ownerToken: string;
  let consumerToken: string;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
  });
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
  });

  const asOwner = (method: string, path: string, body?: unknown) =>
    stack.call(method, path, { token: ownerToken, ...(body === undefined ? {} : { body }) });

  it(`creates ${ROUNDS} of ${ROUNDS} webhooks and processors immediately after their Service and model`, async () => {
    const statuses: [number, number, number][] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // No waiting anywhere: each request goes out as soon as the one before answered.
      const model = await modelOnFakeProvider(stack, `Fresh model ${i}`, fake.url, KEY);
      const service = await asOwner('POST', '/v1/catalog/services/', { name: `Fresh service ${i}` });
      const webhook = await asOwner('POST', '/v1/external/serviceowner/webhooks/', {
        name: `Hook ${i}`,
        service: service.body.id,
        target_url: 'https://cmdb.example.com/hook',
        change_instance_state: 'APPROVED',
      });
      const processor = await asOwner('POST', '/v1/ai/processors/', {
        name: `Config ${i}`,
        service: service.body.id,
        kind: 'config',
        llm_model: model,
        prompt: 'Do config.',
        active: true,
      });
      statuses.push([service.status, webhook.status, processor.status]);
      expect(webhook.body).toMatchObject({ service: service.body.id });
      expect(processor.body).toMatchObject({ service: service.body.id, llm_model: model, active: true });
    }
    expect(statuses).toEqual(Array.from({ length: ROUNDS }, () => [201, 201, 201]));
  });

  it('still answers that a Service or model that exists nowhere does not exist', async () => {
    const webhook = await asOwner('POST', '/v1/external/serviceowner/webhooks/', {
      name: 'Nowhere',
      service: 999_999,
      target_url: 'https://cmdb.example.com/hook',
      change_instance_state: 'APPROVED',
    });
    expect(webhook.status).toBe(400);
    expect(Object.keys(webhook.body.errors)).toEqual(['service']);
    const service = await asOwner('POST', '/v1/catalog/services/', { name: 'Real service' });
    const processor = await asOwner('POST', '/v1/ai/processors/', {
      name: 'On no model',
      service: service.body.id,
      kind: 'config',
      llm_model: 999_999,
      prompt: 'Do config.',
    });
    expect(processor.status).toBe(400);
    expect(Object.keys(processor.body.errors)).toEqual(['llm_model']);
  });

  describe('a Service Item right after the declaration that approved it', () => {
    const PACK = '/v1/external/serviceowner/pack/';
    const declare = (service: number, declaration: object, token = consumerToken) =>
      stack.call('POST', `/v1/catalog/services/${service}/declarations/`, { token, body: { declaration } });
    /** A Service of the owner, auto-approving or not, with an active config processor. */
    async function serviceWithConfig(name: string, autoApproval: boolean): Promise<number> {
      const model = await modelOnFakeProvider(stack, `${name} model`, fake.url, KEY);
      await modelKnownToOrchestrator(stack, model);
      const service = await asOwner('POST', '/v1/catalog/services/', { name, auto_approval: autoApproval });
      const processor = {
        name: `${name} config`,
        service: service.body.id,
        kind: 'config',
        llm_model: model,
        prompt: 'Do config.',
        active: true,
      };
      await waitFor(async () => (await asOwner('POST', '/v1/ai/processors/', processor)).status === 201, {
        what: 'the config processor',
      });
      return service.body.id as number;
    }

    it(`${ROUNDS} of ${ROUNDS} triggers, retriggers and pushes right after an auto-approved declaration succeed`, async () => {
      const service = await serviceWithConfig('Fresh items', true);
      const asked = [
        (item: number) => asOwner('POST', `${PACK}trigger/service_item/${item}/config/`),
        (item: number) => asOwner('POST', `${PACK}retrigger/service_item/${item}/`, { feedback: 'again' }),
        (item: number) => asOwner('POST', `${PACK}data/service_item/${item}/config/`, { vm: 'pushed' }),
      ];
      // One consumer per round: each declaration creates a new Service Item.
      const consumers = await Promise.all(Array.from({ length: ROUNDS }, () => stack.issueToken('consumer')));
      const answers: string[] = [];
      const items = new Set<number>();
      for (let i = 0; i < ROUNDS; i++) {
        const submitted = await declare(service, { round: i }, consumers[i]);
        expect(submitted.body.change_instance).toMatchObject({ state: 'APPROVED' });
        const item = submitted.body.change_instance.service_item as number;
        items.add(item);
        // No waiting: the orchestrator may not have heard of the approval yet.
        const answer = await asked[i % asked.length]!(item);
        const latest = await asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        // The action's status, then the read's (the item's latest pipeline).
        answers.push(`${answer.status} ${latest.status}`);
        if (latest.status === 200) expect(latest.body.service_item).toBe(item);
      }
      expect(items.size).toBe(ROUNDS);
      expect(answers).toEqual(
        Array.from({ length: ROUNDS }, (_, i) => (i % asked.length === 2 ? '201 200' : '202 200')),
      );
    });

    it('an item whose declaration is not approved yet, or that exists nowhere, is still 404', async () => {
      const service = await serviceWithConfig('Pending items', false);
      const submitted = await declare(service, { waiting: true });
      expect(submitted.body.change_instance).toMatchObject({ state: 'PENDING' });
      const item = submitted.body.change_instance.service_item as number;
      for (const id of [item, 999_999]) {
        const trigger = await asOwner('POST', `${PACK}trigger/service_item/${id}/config/`);
        expect([trigger.status, trigger.body.detail]).toEqual([
          404,
          `No Service Item ${id} with an approved declaration among your Services`,
        ]);
        expect((await asOwner('GET', `${PACK}pipelines/latest/service_item/${id}/`)).status).toBe(404);
      }
    });
  });
});
