import { events } from '@pack/contracts';
import { EventTap, publishEvent, startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { modelKnownToOrchestrator, modelOnFakeProvider, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-pipeline-0000';
const PACK = '/v1/external/serviceowner/pack/';

describe('pipelines through the gateway with the real llm-gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let tap: EventTap;
  let ownerToken: string;
  let consumerToken: string;
  const amqpUrl = process.env.AMQP_URL!;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    tap = await EventTap.start(amqpUrl, stack.brokerNamespace, [events.llmGenerateCompleted.type]);
    [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
  });
  afterAll(async () => {
    await Promise.all([tap?.stop(), fake?.close()]);
    await stack?.stop();
  });

  const asOwner = (method: string, path: string, body?: unknown) =>
    pipelineActors(stack, ownerToken, consumerToken).asOwner(method, path, body);
  const serviceWith = (name: string, model: number, kinds: string[]) =>
    pipelineActors(stack, ownerToken, consumerToken).serviceWith(name, model, kinds);
  const approved = async (service: number, declaration: object) =>
    (await pipelineActors(stack, ownerToken, consumerToken).approved(service, declaration)).item;

  const latest = (item: number) => asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);

  it('runs CONFIG on approval, then VERIFY and EXECUTION, storing PackData and the exact total cost', async () => {
    const modelId = await modelOnFakeProvider(stack, 'Pipeline model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, modelId);
    const service = await serviceWith('Managed VM', modelId, ['config', 'verify', 'execution']);
    fake.scriptReplies('{"vm":"c2"}', '{"checked":true}', '{"delivered":true}');

    const item = await approved(service, { size: 'large' });
    const done = await waitFor(
      async () => {
        const answer = await latest(item);
        return answer.body?.stages?.[2]?.state === 'OK' && answer;
      },
      { what: 'EXECUTION OK' },
    );
    // 12 input and 7 output tokens per call at 0.15 / 0.6 per 1M: 0.000006 each, three calls.
    expect(done.body).toMatchObject({
      service_item: item,
      run: 1,
      total_cost: '0.000018',
      currency: 'USD',
      stages: [
        { stage: 'CONFIG', state: 'OK', cost: '0.000006', pack_data: { vm: 'c2' } },
        { stage: 'VERIFY', state: 'OK', cost: '0.000006', pack_data: { checked: true } },
        { stage: 'EXECUTION', state: 'OK', cost: '0.000006', pack_data: { delivered: true } },
      ],
    });
    const prompts = fake.requestsTo('/chat/completions').map((r) => JSON.stringify(r.body));
    expect(prompts).toHaveLength(3);
    expect(prompts[0]).toContain('{\\"size\\":\\"large\\"}');
    expect(prompts[1]).toContain('PackData of the CONFIG stage:\\n{\\"vm\\":\\"c2\\"}');
    expect((await asOwner('GET', `${PACK}pipelines/${done.body.id}/`)).body).toEqual(done.body);

    // The llm-gateway may republish a result: the stage and the costs stay as they are.
    const configResult = (await tap.drain()).find(
      (event) => event.data.reply_to?.pipeline_id === done.body.id && event.data.reply_to.stage === 'CONFIG',
    )!;
    await publishEvent(amqpUrl, stack.brokerNamespace, events.llmGenerateCompleted, {
      ...configResult.data,
      parsed_json: null,
      output: '{"vm":"other"}',
    });

    // A Service without a verify processor: CONFIG runs, EXECUTION cannot start without VERIFY's PackData.
    const other = await serviceWith('No verify', modelId, ['config', 'execution']);
    const second = await approved(other, { size: 'small' });
    await waitFor(async () => (await latest(second)).body?.stages?.[0]?.state === 'OK', {
      what: 'CONFIG OK',
    });
    const refused = await asOwner('POST', `${PACK}trigger/service_item/${second}/execution/`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/VERIFY stage has no PackData/);
    expect((await latest(item)).body).toEqual(done.body);

    // Charges Settings hiding costs from service owners hide them here too; the admin still sees them.
    const patch = { charges: { ENABLED: true, hide_for_serviceowners: true } };
    expect((await stack.call('PATCH', '/v1/core/general_settings/', { body: patch })).status).toBe(200);
    const hidden = await waitFor(
      async () => {
        const answer = await latest(item);
        return answer.body.total_cost === null && answer;
      },
      { what: 'the orchestrator to apply the charges settings' },
    );
    expect(hidden.body).toMatchObject({
      currency: null,
      stages: [{ cost: null }, { cost: null }, { cost: null }],
    });
    const asAdmin = await stack.call('GET', `${PACK}pipelines/${done.body.id}/`);
    expect(asAdmin.body.total_cost).toBe('0.000018');

    // Currency ENABLED off: the admin sees the same costs, with no currency named.
    const currencyOff = { currency: { ENABLED: false } };
    expect((await stack.call('PATCH', '/v1/core/general_settings/', { body: currencyOff })).status).toBe(200);
    const plain = await waitFor(
      async () => {
        const answer = await stack.call('GET', `${PACK}pipelines/${done.body.id}/`);
        return answer.body.currency === null && answer;
      },
      { what: 'the orchestrator to apply the Currency setting' },
    );
    expect(plain.body).toMatchObject({
      total_cost: '0.000018',
      currency: null,
      stages: [{ cost: '0.000006' }, { cost: '0.000006' }, { cost: '0.000006' }],
    });
  });
});
