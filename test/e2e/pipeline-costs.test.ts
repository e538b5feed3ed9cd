/**
 * A late reply's cost reaches its pipeline's total, once; concurrent retriggers
 * of one Service Item leave one live run, and no superseded run starts a further (billed) stage
 * (docs/decisions/0024 "Costs" and "One live run", 0028 "Late results").
 */
import { events } from '@pack/contracts';
import {
  EventTap,
  type FakeProviderServer,
  publishEvent,
  startFakeOpenAi,
  storedCollection,
  waitFor,
} from '@pack/testkit';
import { pipelineActors, slowPricedModel } from '../pipeline-actors';
import {
  modelKnownToOrchestrator,
  modelOnFakeProvider,
  pipelineMessagesHandled,
  startStack,
  type Stack,
} from '../stack';

const KEY = 'sk-e2e-costs-0000';
const PACK = '/v1/external/serviceowner/pack/';
/** What one call of the fake provider costs on the model below (its default usage, prices 1 and 2). */
const CALL = 0.000026;

describe('pipeline costs and concurrent retriggers, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let tap: EventTap;
  let actors: ReturnType<typeof pipelineActors>;
  let model: number;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([
      startStack({
        env: {
          'pipeline-orchestrator': {
            PIPELINE_SWEEP_INTERVAL_MS: '100',
            PIPELINE_STAGE_TIMEOUT_MARGIN_MS: '300',
            // A stage may take 1 attempt x (the model's 1 s + 0.1 s backoff) + 0.3 s = 1.4 s.
            PIPELINE_STAGE_CALL_ATTEMPTS: '1',
            PIPELINE_STAGE_BACKOFF_MS: '100',
          },
        },
      }),
      startFakeOpenAi({ apiKey: KEY }),
    ]);
    const [owner, consumer] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(stack, owner, consumer);
    model = await slowPricedModel(stack, 'Costs model', fake.url, KEY);
    tap = await EventTap.start(process.env.AMQP_URL!, stack.brokerNamespace, [
      events.llmGenerateCompleted.type,
    ]);
  });
  afterAll(async () => {
    await Promise.all([tap?.stop(), fake?.close()]);
    await stack?.stop();
  });

  const asOwner = (method: string, path: string, body?: unknown) => actors.asOwner(method, path, body);
  const latest = async (item: number) =>
    (await asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`)).body;
  const stageIs = (item: number, index: number, state: string) =>
    waitFor(
      async () => {
        const body = await latest(item);
        return body?.stages?.[index]?.state === state && body;
      },
      { what: `stage ${index} ${state}` },
    );
  /** Provider calls whose processor prompt is that of `kind` (pipelineActors: `Do <kind>.`). */
  const callsOf = (kind: string) =>
    fake
      .requestsTo('/chat/completions')
      .filter((request) =>
        (request.body as { messages: { role: string; content: string }[] }).messages.some(
          (message) => message.role === 'system' && message.content === `Do ${kind}.`,
        ),
      );

  it('spec 2.2 "Cost of a pipeline = the sum of the costs of the individual responses across all its stages.": a reply that comes after its stage timed out and was triggered again counts once', async () => {
    const service = await actors.serviceWith('Late verify', model, ['config', 'verify']);
    // CONFIG answers at once; VERIFY's first call is asked to come back in 5 s, long after the
    // stage's 1.4 s: the sweeper fails VERIFY and the owner triggers it again meanwhile.
    fake.scriptReplies('{"vm":"late"}');
    fake.next({}).next({ fault: { kind: 'status', status: 429, retryAfter: '5' } });
    const { item } = await actors.approved(service, { size: 'late' });
    const failed = await stageIs(item, 1, 'FAILED');
    expect(failed.stages[1].error).toMatch(/^timeout: /);
    const again = await asOwner('POST', `${PACK}trigger/service_item/${item}/verify/`);
    expect(again.status).toBe(202);
    const verified = await stageIs(item, 1, 'OK');
    expect(verified.id).toBe(failed.id);

    // The first attempt's reply arrives: its cost is the pipeline's; VERIFY stays as attempt 2 left it.
    const late = await tap.waitFor(
      (all) =>
        all.some((event) => event.data.request_id === `pipeline-${failed.id}-VERIFY-1` && event.data.ok),
      'the late VERIFY reply',
    );
    const reply = late.find((event) => event.data.request_id === `pipeline-${failed.id}-VERIFY-1`)!.data;
    expect(reply.cost).toBe('0.000026');
    const total = (3 * CALL).toFixed(6);
    const counted = await waitFor(
      async () => {
        const body = await latest(item);
        return body.total_cost === total && body;
      },
      { what: `the total ${total} (CONFIG, VERIFY twice)` },
    );
    expect(counted).toMatchObject({ total_cost_covers: 'all_calls', unpriced_calls: 0 });
    expect(counted.stages[1]).toMatchObject({ state: 'OK', error: null, cost: '0.000026' });
    expect(callsOf('verify')).toHaveLength(3);

    // Redelivered (the llm-gateway republishes a result): counted already, the total stays.
    const orchestrator = stack.service('pipeline-orchestrator').metricsUrl;
    const handled = await pipelineMessagesHandled(orchestrator);
    await publishEvent(process.env.AMQP_URL!, stack.brokerNamespace, events.llmGenerateCompleted, reply);
    await waitFor(async () => (await pipelineMessagesHandled(orchestrator)) > handled, {
      what: 'the repeated late reply handled',
    });
    expect((await latest(item)).total_cost).toBe(total);
  });

  it('spec 3.1 rule 4 "Retrigger restarts the pipeline from CONFIG": concurrent retriggers of one Service Item leave exactly one live run, and no superseded run starts its next stage', async () => {
    // A model that waits 30 s, not 1 s: what is asserted is which runs go on, and a CONFIG of 300 ms
    // among six at once on a loaded machine must not time out (its run would end there, FAILED).
    const patient = await modelOnFakeProvider(stack, 'Retrigger model', fake.url, KEY, { timeout: 30 });
    await modelKnownToOrchestrator(stack, patient);
    const service = await actors.serviceWith('Retriggered together', patient, ['config', 'verify']);
    const { item } = await actors.approved(service, { size: 'together' });
    await stageIs(item, 1, 'OK');
    const rounds = 4;
    const together = 6;
    type StoredRun = {
      _id: number;
      superseded_by?: number;
      stages: Record<string, { state: string | null; error?: string | null }>;
    };
    const runsOfItem = async () =>
      (await storedCollection(stack.service('pipeline-orchestrator'), 'pipelines')).filter(
        (pipeline) => pipeline.service_item_id === item,
      ) as unknown as StoredRun[];
    for (let round = 0; round < rounds; round += 1) {
      const before = new Set((await runsOfItem()).map((run) => run._id));
      const verifyBefore = callsOf('verify').length;
      // Every CONFIG of this round answers after 300 ms: the runs overlap.
      fake.always({ latencyMs: 300 });
      const answers = await Promise.all(
        Array.from({ length: together }, () => asOwner('POST', `${PACK}retrigger/service_item/${item}/`)),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(together).fill(202));
      fake.always({});
      const fresh = await waitFor(
        async () => {
          const runs = (await runsOfItem()).filter((run) => !before.has(run._id));
          const settled = runs.every((run) =>
            Object.values(run.stages).every(
              (stage) => stage.state !== 'SCHEDULED' && stage.state !== 'WAITING_FOR_RESPONSE',
            ),
          );
          return settled && runs;
        },
        { what: `round ${round}: every new run of the item settled` },
      );
      const live = fresh.filter((run) => run.superseded_by === undefined);
      expect(live).toHaveLength(1);
      // Both stages, so that a failure shows where the live run stopped and why.
      expect(live[0]!.stages).toMatchObject({ CONFIG: { state: 'OK' }, VERIFY: { state: 'OK' } });
      expect((await latest(item)).id).toBe(live[0]!._id);
      // Only the live run's VERIFY reached the provider: no superseded run started its next stage.
      expect(callsOf('verify').length - verifyBefore).toBe(1);
      // Each request answers with the live run or with its own run, superseded by a newer one.
      for (const answer of answers) expect(fresh.map((run) => run._id)).toContain(answer.body.id);
    }
  });

  it('a cancelled Change Instance stops its pipeline: the call already made is recorded and costed, no further stage starts, and a retrigger, a trigger or a push is refused naming the state', async () => {
    const patient = await modelOnFakeProvider(stack, 'Cancelled model', fake.url, KEY, {
      timeout: 30,
      input_price_per_1m_tokens: '1',
      output_price_per_1m_tokens: '2',
    });
    await modelKnownToOrchestrator(stack, patient);
    const service = await actors.serviceWith('Cancelled while running', patient, ['config', 'verify']);
    const verifyBefore = callsOf('verify').length;
    // CONFIG's call is held open until the cancellation has reached the pipeline.
    let release = () => {};
    fake.next({ until: new Promise<void>((resolve) => (release = resolve)) });
    const { instance, item } = await actors.approved(service, { size: 'cancelled' });
    await stageIs(item, 0, 'WAITING_FOR_RESPONSE');
    const cancelled = await asOwner('PATCH', `/v1/catalog/change_instances/${instance}/`, {
      state: 'CANCELLED',
    });
    expect(cancelled.status).toBe(200);
    const marked = await waitFor(
      async () => {
        const body = await latest(item);
        return body.cancelled?.change_instance === instance && body;
      },
      { what: 'the pipeline to show the cancellation' },
    );
    expect(marked.cancelled).toMatchObject({ change_instance: instance });
    expect(marked.cancelled.reason).toContain(`Change Instance ${instance} was CANCELLED`);

    release();
    const ended = await stageIs(item, 0, 'OK');
    // The call was made and paid for: recorded with its cost. Rule 1 would have scheduled VERIFY
    // in the very write that recorded CONFIG's OK: it did not, and says why.
    expect(ended).toMatchObject({ id: marked.id, total_cost: String(CALL) });
    expect(ended.stages[0]).toMatchObject({
      cost: String(CALL),
      pack_data: { text: 'Hello from the fake provider.' },
    });
    expect(ended.stages[1]).toMatchObject({ state: null, error: marked.cancelled.reason });
    expect(callsOf('verify')).toHaveLength(verifyBefore);
    const calls = fake.requestsTo('/chat/completions').length;

    const refusals = await Promise.all([
      asOwner('POST', `${PACK}retrigger/service_item/${item}/`),
      asOwner('POST', `${PACK}trigger/service_item/${item}/verify/`),
      asOwner('POST', `${PACK}trigger/service_item/${item}/config/`),
      asOwner('POST', `${PACK}data/service_item/${item}/config/`, { vm: 'by hand' }),
    ]);
    for (const refused of refusals) {
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toContain(
        `Change Instance ${instance} of the Service Item's latest approved declaration is CANCELLED`,
      );
    }
    const after = await latest(item);
    expect(after).toMatchObject({ id: marked.id, total_cost: String(CALL) });
    expect(after.stages[0].pack_data).toEqual({ text: 'Hello from the fake provider.' });
    expect(fake.requestsTo('/chat/completions')).toHaveLength(calls);
    const history = (await asOwner('GET', `/v1/catalog/change_instances/${instance}/`)).body.history;
    expect(history.at(-1)).toMatchObject({ to: 'CANCELLED' });
    expect(history.map((step: { to: string }) => step.to)).not.toContain('COMPLETED');
  });
});
