import { startFakeOpenAi, type FakeProviderServer } from '@pack/testkit';
import { modelOnFakeProvider, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-ryw-0000';
const ROUNDS = 20;

/**
 * Issue 21: what was just created exists everywhere at once for the one who created it. A
 * service that does not hold another service's record in its projection yet asks the owner
 * (an internal read signed like every call behind the gateway) before answering that it does
 * not exist, and keeps what it learns.
 */
describe('read-your-writes across services, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let ownerToken: string;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    ownerToken = await stack.issueToken('service_owner');
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
});
