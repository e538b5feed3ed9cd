/**
 * One pipeline stage and one webhook delivery made through the public API, for tests that look
 * for them elsewhere (metrics): a model on a fake provider, an auto-approving Service with an
 * active config processor and a webhook at submission, and one consumer's declaration.
 */
import { Receiver, startFakeOpenAi, waitFor } from '@pack/testkit';
import { modelKnownToOrchestrator, modelOnFakeProvider, type Stack } from '../stack';

const KEY = 'sk-e2e-stage-delivery-0000';

/** Resolves once the CONFIG stage is OK and the receiver has the delivery; closes what it started. */
export async function oneStageAndOneDelivery(stack: Stack): Promise<void> {
  const [fake, receiver] = await Promise.all([startFakeOpenAi({ apiKey: KEY }), new Receiver().start()]);
  try {
    const [owner, consumer] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    const modelId = await modelOnFakeProvider(stack, 'Metrics model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, modelId);
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Metered service', auto_approval: true },
    });
    expect(service.status).toBe(201);
    // The catalog's Service event reaches the orchestrator and the dispatcher asynchronously: 400 until then.
    const processor = {
      name: 'Metered config',
      service: service.body.id,
      kind: 'config',
      llm_model: modelId,
      prompt: 'Do config.',
      active: true,
    };
    await waitFor(
      async () =>
        (await stack.call('POST', '/v1/ai/processors/', { token: owner, body: processor })).status === 201,
      { what: 'the config processor' },
    );
    const webhook = { name: 'Metered hook', service: service.body.id, target_url: receiver.url };
    const hook = await waitFor(
      async () => {
        const reply = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
          token: owner,
          body: webhook,
        });
        return reply.status === 201 && (reply.body.id as number);
      },
      { what: 'the webhook' },
    );
    fake.scriptReplies('{"vm":"c2"}');

    const submitted = await stack.call('POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
      token: consumer,
      body: { declaration: { size: 'small' } },
    });
    expect(submitted.body.change_instance).toMatchObject({ state: 'APPROVED' });
    const item = submitted.body.change_instance.service_item as number;
    await waitFor(
      async () => {
        const latest = await stack.call(
          'GET',
          `/v1/external/serviceowner/pack/pipelines/latest/service_item/${item}/`,
          { token: owner },
        );
        return latest.body?.stages?.[0]?.state === 'OK';
      },
      { what: 'CONFIG OK' },
    );
    // Delivered once the dispatcher recorded the target's answer (not only once the target got it).
    await waitFor(
      async () => {
        const responses = await stack.call('GET', `/v1/external/serviceowner/webhooks/${hook}/responses/`, {
          token: owner,
        });
        return responses.body.results?.[0]?.state === 'OK';
      },
      { what: 'the webhook delivery' },
    );
    expect(receiver.requests).toHaveLength(1);
  } finally {
    await Promise.all([fake.close(), receiver.stop()]);
  }
}
