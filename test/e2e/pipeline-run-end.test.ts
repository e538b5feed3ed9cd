/**
 * Through the gateway: a run ends (its Change Instance COMPLETED, its
 * webhook fired) once the last stage that has an active processor ends OK, and a re-run of a
 * stage owns no PackData until its own result (docs/decisions/0024, 0026).
 */
import { Receiver, startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { modelKnownToOrchestrator, modelOnFakeProvider, stackAtRest, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-run-end-0000';
const PACK = '/v1/external/serviceowner/pack/';

describe('the end of a pipeline run, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let receiver: Receiver;
  let actors: ReturnType<typeof pipelineActors>;
  let model: number;

  beforeAll(async () => {
    [stack, fake, receiver] = await Promise.all([
      startStack(),
      startFakeOpenAi({ apiKey: KEY }),
      new Receiver().start(),
    ]);
    const [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(stack, ownerToken, consumerToken);
    model = await modelOnFakeProvider(stack, 'Run end model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, model);
  });
  afterAll(async () => {
    await Promise.all([fake?.close(), receiver?.stop()]);
    await stack?.stop();
  });

  const asOwner = (method: string, path: string, body?: unknown) => actors.asOwner(method, path, body);
  const latest = async (item: number) =>
    (await asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`)).body;
  const instance = async (id: number) => (await asOwner('GET', `/v1/catalog/change_instances/${id}/`)).body;
  const history = async (id: number) =>
    ((await instance(id)).history as { to: string }[]).map((step) => step.to);
  /** The item's latest pipeline once stage `index` is in `state`. */
  const reached = (item: number, index: number, state: string) =>
    waitFor(
      async () => {
        const body = await latest(item);
        return body?.stages?.[index]?.state === state && body;
      },
      { what: `stage ${index} ${state}` },
    );
  const instanceIn = (id: number, state: string) =>
    waitFor(async () => (await instance(id)).state === state, { what: `Change Instance ${id} ${state}` });
  const activate = async (service: number, kind: string) => {
    const body = {
      name: `Later ${kind}`,
      service,
      kind,
      llm_model: model,
      prompt: `Do ${kind}.`,
      active: true,
    };
    expect((await asOwner('POST', '/v1/ai/processors/', body)).status).toBe(201);
  };
  /** Every event so far handled: the progress of a stage end has reached the catalog, or it never will. */
  const settled = () => stackAtRest(stack);
  const COMPLETED_PATH = ['PENDING', 'APPROVED', 'IN_PROGRESS', 'COMPLETED'];

  it('"a run ends when no further stage can start by itself": CONFIG OK with no active VERIFY processor completes the Change Instance and fires its webhook; a later VERIFY trigger still runs', async () => {
    const service = await actors.serviceWith('Config only', model, ['config']);
    await waitFor(
      async () =>
        (
          await asOwner('POST', '/v1/external/serviceowner/webhooks/', {
            name: 'On completion',
            service,
            target_url: receiver.url,
            change_instance_state: 'COMPLETED',
          })
        ).status === 201,
      { what: 'the webhook (the dispatcher learns the Service from its event)' },
    );
    fake.scriptReplies('{"vm":"c1"}');
    const { instance: id, item } = await actors.approved(service, { size: 'small' });
    const run = await reached(item, 0, 'OK');
    expect(run.stages[1].state).toBeNull();
    await instanceIn(id, 'COMPLETED');
    expect(await history(id)).toEqual(COMPLETED_PATH);
    const hook = await waitFor(() => receiver.requests.find((request) => request.json?.id === service), {
      what: 'the COMPLETED webhook',
    });
    expect(hook.json).toMatchObject({ id: service, state: 'COMPLETED' });

    // The processor set changes later: a VERIFY trigger runs in the pipeline; COMPLETED stays final.
    await activate(service, 'verify');
    fake.scriptReplies('{"checked":true}');
    const trigger = await asOwner('POST', `${PACK}trigger/service_item/${item}/verify/`);
    expect(trigger.status).toBe(202);
    const verified = await reached(item, 1, 'OK');
    expect(verified).toMatchObject({ id: run.id, run: run.run });
    expect(verified.stages[1].pack_data).toEqual({ checked: true });
    await settled();
    expect((await instance(id)).state).toBe('COMPLETED');
    expect(await history(id)).toEqual(COMPLETED_PATH);
  });

  it('VERIFY OK with no active EXECUTION processor completes the Change Instance', async () => {
    const service = await actors.serviceWith('Config and verify', model, ['config', 'verify']);
    fake.scriptReplies('{"vm":"c2"}', '{"checked":true}');
    const { instance: id, item } = await actors.approved(service, { size: 'medium' });
    await reached(item, 1, 'OK');
    await instanceIn(id, 'COMPLETED');
    expect(await history(id)).toEqual(COMPLETED_PATH);
  });

  it('spec rule 2: PackData pushed into a stage after which no stage has an active processor completes the Change Instance', async () => {
    const service = await actors.serviceWith('Outside work', model, []);
    const { instance: id, item } = await actors.approved(service, { size: 'large' });
    const pushed = await waitFor(
      async () => {
        const reply = await asOwner('POST', `${PACK}data/service_item/${item}/config/`, { vm: 'outside' });
        return reply.status === 201 && reply;
      },
      { what: 'the push' },
    );
    expect(pushed.body.pipeline.stages[0]).toMatchObject({ state: 'OK', origin: 'pushed' });
    await instanceIn(id, 'COMPLETED');
    expect(await history(id)).toEqual(COMPLETED_PATH);
  });

  it('a later stage with an active processor keeps the run open for PackData pushed from outside (rule 2)', async () => {
    const service = await actors.serviceWith('Outside verifier', model, ['config', 'execution']);
    fake.scriptReplies('{"vm":"c3"}');
    const { instance: id, item } = await actors.approved(service, { size: 'xl' });
    await reached(item, 0, 'OK');
    await settled();
    expect((await instance(id)).state).toBe('IN_PROGRESS');
    fake.scriptReplies('{"delivered":true}');
    const pushed = await asOwner('POST', `${PACK}data/service_item/${item}/verify/`, { verdict: 'ok' });
    expect(pushed.status).toBe(201);
    await reached(item, 2, 'OK');
    await instanceIn(id, 'COMPLETED');
    expect(await history(id)).toEqual(COMPLETED_PATH);
  });

  it('"A stage can be triggered separately only if the PackData of the previous stage exists.": a failed re-run of VERIFY shows no PackData and EXECUTION answers 409', async () => {
    const service = await actors.serviceWith('Failed re-run', model, ['config', 'verify']);
    fake.scriptReplies('{"vm":"c4"}', '{"checked":"first"}');
    const { item } = await actors.approved(service, { size: 'xs' });
    const first = await reached(item, 1, 'OK');
    expect(first.stages[1].pack_data).toEqual({ checked: 'first' });

    fake.next({ fault: { kind: 'status', status: 400, message: 'the verifier refused' } });
    const again = await asOwner('POST', `${PACK}trigger/service_item/${item}/verify/`);
    expect(again.status).toBe(202);
    expect(again.body.stages[1].pack_data).toBeNull();
    const failed = await reached(item, 1, 'FAILED');
    expect(failed.id).toBe(first.id);
    expect(failed.stages[1]).toMatchObject({ state: 'FAILED', pack_data: null });
    expect(failed.stages[0].pack_data).toEqual({ vm: 'c4' });

    await activate(service, 'execution');
    const calls = fake.requestsTo('/chat/completions').length;
    const execution = await asOwner('POST', `${PACK}trigger/service_item/${item}/execution/`);
    expect([execution.status, execution.body.detail]).toEqual([
      409,
      'the VERIFY stage has no PackData yet: run it first',
    ]);
    expect((await latest(item)).stages[2].state).toBeNull();
    expect(fake.requestsTo('/chat/completions')).toHaveLength(calls);
  });
});
