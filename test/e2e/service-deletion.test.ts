import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { modelKnownToOrchestrator, modelOnFakeProvider, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-retire-0000';
const PACK = '/v1/external/serviceowner/pack/';
const WEBHOOKS = '/v1/external/serviceowner/webhooks/';

/**
 * Deleting a Service retires what hangs on it. Its webhooks are disabled (not removed:
 * they and their responses stay readable) and stop firing, its processors are deactivated (so
 * its pipelines start no stage and the model is free), and an admin can still read all of it.
 */
describe('deleting a Service, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let receiver: http.Server;
  let target = '';
  const received: string[] = [];
  let ownerToken: string;
  let consumerToken: string;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
  });
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('disables its webhooks, deactivates its processors, stops its pipelines and frees its model', async () => {
    const { asOwner, serviceWith, approved } = pipelineActors(stack, ownerToken, consumerToken);
    const model = await modelOnFakeProvider(stack, 'Retired model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, model);
    const service = await serviceWith('Retired service', model, ['config', 'verify', 'execution']);
    const hook = await asOwner('POST', WEBHOOKS, {
      name: 'On approval',
      service,
      target_url: target,
      change_instance_state: 'APPROVED',
    });
    expect(hook.status).toBe(201);
    fake.scriptReplies('{"vm":"small"}', '{"checked":true}', '{"done":true}');
    const { instance, item } = await approved(service, { size: 'small' });
    await waitFor(
      async () =>
        (await asOwner('GET', `/v1/catalog/change_instances/${instance}/`)).body.state === 'COMPLETED',
      { what: 'the run COMPLETED' },
    );
    await waitFor(() => received.length === 1, { what: 'the APPROVED webhook' });
    const processors = (await asOwner('GET', `/v1/ai/processors/?service=${service}`)).body.results;
    expect(processors.map((p: { active: boolean }) => p.active)).toEqual([true, true, true]);
    const processor = processors[0];

    expect((await asOwner('DELETE', `/v1/catalog/services/${service}/`)).status).toBe(204);

    // The webhook: disabled with the reason, still readable by its owner and the admin.
    const disabled = await waitFor(
      async () => {
        const read = await stack.call('GET', `${WEBHOOKS}${hook.body.id}/`);
        return read.body.enabled === false && read.body;
      },
      { what: 'the webhook disabled' },
    );
    expect(disabled).toMatchObject({ service, enabled: false, disabled_reason: 'its Service was deleted' });
    expect((await asOwner('GET', `${WEBHOOKS}${hook.body.id}/`)).body).toMatchObject({ enabled: false });
    const enable = await asOwner('PATCH', `${WEBHOOKS}${hook.body.id}/`, { enabled: true });
    expect(enable.status).toBe(400);
    expect(Object.keys(enable.body.errors)).toEqual(['enabled']);
    // A manual fire is refused (409 naming enabled) and never sent.
    const fired = await stack.call('POST', `${WEBHOOKS}${hook.body.id}/trigger/`, { body: {} });
    expect(fired.status).toBe(409);
    expect(fired.body.errors.enabled[0]).toContain('its Service was deleted');
    expect(received).toHaveLength(1);

    // The processor: inactive, readable by the admin; no stage of the item starts again.
    const retired = await waitFor(
      async () => {
        const read = await stack.call('GET', `/v1/ai/processors/${processor.id}/`);
        return read.body.active === false && read.body;
      },
      { what: 'the processor deactivated' },
    );
    expect(retired).toMatchObject({ id: processor.id, service, active: false });
    const trigger = await stack.call('POST', `${PACK}trigger/service_item/${item}/config/`);
    expect(trigger.status).toBe(409);
    const latest = await stack.call('GET', `${PACK}pipelines/latest/service_item/${item}/`);
    expect(latest.status).toBe(200);
    expect(latest.body.stages.map((stage: { state: string }) => stage.state)).toEqual(['OK', 'OK', 'OK']);
    const all = (await stack.call('GET', `/v1/ai/processors/?service=${service}`)).body.results;
    expect(all.map((p: { active: boolean }) => p.active)).toEqual([false, false, false]);

    // Its model is free to delete (the llm-gateway heard the processor is inactive).
    await waitFor(async () => (await stack.call('DELETE', `/v1/ai/llm_models/${model}/`)).status === 204, {
      what: 'the model deleted',
    });
  });
});
