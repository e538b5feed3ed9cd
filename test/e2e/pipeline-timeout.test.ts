import { events } from '@pack/contracts';
import { EventTap, metricValue, startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { modelKnownToOrchestrator, pipelineMessagesHandled, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-timeout-0000';
const PACK = '/v1/external/serviceowner/pack/';

describe('a stage whose result does not come in time', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let tap: EventTap;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([
      startStack({
        env: {
          'pipeline-orchestrator': {
            PIPELINE_SWEEP_INTERVAL_MS: '100',
            PIPELINE_STAGE_TIMEOUT_MARGIN_MS: '300',
          },
        },
      }),
      startFakeOpenAi({ apiKey: KEY }),
    ]);
    tap = await EventTap.start(process.env.AMQP_URL!, stack.brokerNamespace, [
      events.llmGenerateCompleted.type,
    ]);
  });
  afterAll(async () => {
    await Promise.all([tap?.stop(), fake?.close()]);
    await stack?.stop();
  });

  it('becomes FAILED by the sweeper after the model timeout plus the margin; the late result changes nothing', async () => {
    const model = await stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name: 'Slow model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        timeout: 1,
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(model.status).toBe(201);
    await modelKnownToOrchestrator(stack, model.body.id);
    const service = await stack.call('POST', '/v1/catalog/services/', { body: { name: 'Slow service' } });
    for (const kind of ['config', 'verify']) {
      const body = {
        name: kind,
        service: service.body.id,
        kind,
        llm_model: model.body.id,
        prompt: kind,
        active: true,
      };
      await waitFor(async () => (await stack.call('POST', '/v1/ai/processors/', { body })).status === 201, {
        what: `the ${kind} processor`,
      });
    }
    // The provider asks to come back in 3 s, then answers at once: the llm-gateway succeeds,
    // well after the model's 1 s timeout plus the 0.3 s margin.
    fake.next({ fault: { kind: 'status', status: 429, retryAfter: '3' } }).scriptReplies('{"vm":"late"}');

    const consumer = await stack.issueToken('consumer');
    const submitted = await stack.call('POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
      token: consumer,
      body: { declaration: { size: 'large' } },
    });
    const instance = submitted.body.change_instance;
    const approve = { body: { state: 'APPROVED' } };
    expect((await stack.call('PATCH', `/v1/catalog/change_instances/${instance.id}/`, approve)).status).toBe(
      200,
    );

    const latest = () => stack.call('GET', `${PACK}pipelines/latest/service_item/${instance.service_item}/`);
    const failed = await waitFor(
      async () => {
        const answer = await latest();
        return answer.body?.stages?.[0]?.state === 'FAILED' && answer;
      },
      { what: 'CONFIG FAILED by the sweeper', timeoutMs: 20_000 },
    );
    expect(failed.body.stages[0].error).toMatch(
      /^timeout: no result within the model's 1 s timeout plus the 0.3 s margin/,
    );
    expect(failed.body.stages[1].state).toBeNull();
    const handledBefore = await pipelineMessagesHandled(stack.service('pipeline-orchestrator').metricsUrl);

    // The llm-gateway's successful result arrives later and is handled: nothing moves.
    const late = await tap.waitFor(
      (all) => all.some((event) => event.data.reply_to?.pipeline_id === failed.body.id),
      'the late generate result',
    );
    const lateResult = late.find((event) => event.data.reply_to?.pipeline_id === failed.body.id)!.data;
    expect(lateResult).toMatchObject({
      ok: true,
      reply_to: { pipeline_id: failed.body.id, stage: 'CONFIG', run: failed.body.run },
    });
    expect(failed.body.run).toBe(1);
    await waitFor(
      async () =>
        (await pipelineMessagesHandled(stack.service('pipeline-orchestrator').metricsUrl)) > handledBefore,
      { what: 'the late result handled' },
    );
    expect((await latest()).body).toEqual(failed.body);
    expect(fake.requestsTo('/chat/completions')).toHaveLength(2);
    const orchestrator = stack.service('pipeline-orchestrator').metricsUrl;
    expect(await metricValue(orchestrator, 'pipeline_stages_timed_out_total')).toBe(1);
    // The run ended there, as with a failed result: its Change Instance says so (0026).
    await waitFor(
      async () =>
        (await stack.call('GET', `/v1/catalog/change_instances/${instance.id}/`)).body.state === 'FAILED',
      { what: 'the Change Instance to be FAILED after the timeout' },
    );
  });
});
