import {
  type CallResult,
  type FakeProviderServer,
  startFakeOpenAi,
  storedCollection,
  waitFor,
} from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import {
  expectRefused,
  modelKnownToOrchestrator,
  modelOnFakeProvider,
  sideProcessorMessagesHandled,
  startStack,
  type Stack,
} from '../stack';

const KEY = 'sk-e2e-ai-switches-0000';
const PACK = '/v1/external/serviceowner/pack/';
const SETTING = 'ai_integration.show_ai_processor';
const NOT_STARTED = /^not started: AI processors are switched off .*show_ai_processor is off/;

/**
 * The AI switches of General Settings (spec 2.8 "show_ai_integration (calculated automatically:
 * true if any AI feature is enabled)"; DESIGN section 9; docs/decisions/0040): off, the Change
 * Instance Validator decides nothing and no AI stage starts, with the reason; on again, without a
 * restart, both work. The tests run in order and share the stack.
 */
describe('the AI switches through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let ownerToken: string;
  let consumerToken: string;
  let model: number;
  /** A Service Item of a Service without processors: triggering it starts nothing, whatever the switch. */
  let probe: number;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    model = await modelOnFakeProvider(stack, 'Switch model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, model);
    probe = (await actors().approved(await actors().serviceWith('Probe', model, []), { probe: true })).item;
  });
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
  });

  const actors = () => pipelineActors(stack, ownerToken, consumerToken);
  const asOwner = (method: string, path: string, body?: unknown) => actors().asOwner(method, path, body);
  const calls = () => fake.requestsTo('/chat/completions').length;
  const latest = (item: number) => asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
  const trigger = (item: number, stage: string) =>
    asOwner('POST', `${PACK}trigger/service_item/${item}/${stage}/`);
  const switchAi = async (ai: { show_ai_validator?: boolean; show_ai_processor?: boolean }) => {
    const patched = await stack.call('PATCH', '/v1/core/general_settings/', { body: { ai_integration: ai } });
    expect(patched.status).toBe(200);
    return patched.body.ai_integration;
  };
  const isAiOff = (answer: CallResult) =>
    answer.status === 409 && answer.body.errors?.[SETTING] !== undefined;
  /** Waits until the orchestrator applies the switch (its settings cache, refreshed on settings.changed). */
  const orchestratorSees = (processorsOn: boolean) =>
    waitFor(async () => isAiOff(await trigger(probe, 'config')) !== processorsOn, {
      what: `the orchestrator to see show_ai_processor ${processorsOn ? 'on' : 'off'}`,
    });
  const submit = async (service: number, declaration: object) => {
    const submitted = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
      token: consumerToken,
      body: { declaration },
    });
    expect(submitted.status).toBe(201);
    return submitted.body.change_instance as { id: number; service_item: number; state: string };
  };
  const instance = async (id: number) => (await asOwner('GET', `/v1/catalog/change_instances/${id}/`)).body;

  let validated: number;
  let auto: number;
  let autoItem: number;

  it('"show_ai_validator" off: the validator decides nothing and the Change Instance waits for a person', async () => {
    validated = await actors().serviceWith('Validated', model, ['change_instance_validator']);
    const ai = await switchAi({ show_ai_validator: false, show_ai_processor: false });
    expect(ai).toMatchObject({
      show_ai_validator: false,
      show_ai_processor: false,
      show_ai_integration: false,
    });
    // Both switches come with one settings version: seeing one, the orchestrator has the other.
    await orchestratorSees(false);
    const before = calls();
    const orchestrator = stack.service('pipeline-orchestrator').metricsUrl;
    const handled = await sideProcessorMessagesHandled(orchestrator);
    const waiting = await submit(validated, { size: 'small' });
    await waitFor(async () => (await sideProcessorMessagesHandled(orchestrator)) > handled, {
      what: 'the orchestrator to handle the new Change Instance',
    });
    expect(calls()).toBe(before);
    const pending = await instance(waiting.id);
    expect(pending.state).toBe('PENDING');
    expect(pending.history.map((step: { by: { kind: string } }) => step.by.kind)).not.toContain('validator');
    // A person decides it.
    const approval = await asOwner('PATCH', `/v1/catalog/change_instances/${waiting.id}/`, {
      state: 'APPROVED',
    });
    expect(approval.status).toBe(200);
    expect(approval.body.history.at(-1)).toMatchObject({
      from: 'PENDING',
      to: 'APPROVED',
      by: { kind: 'user' },
    });
  });

  it('"show_ai_processor" off: an auto-approved submission starts no stage and says why; trigger and retrigger are 409 naming show_ai_processor; pushing PackData still works', async () => {
    auto = await actors().serviceWith('Auto', model, ['config', 'verify', 'execution', 'pack_optimizer']);
    expect((await asOwner('PATCH', `/v1/catalog/services/${auto}/`, { auto_approval: true })).status).toBe(
      200,
    );
    const before = calls();
    const submitted = await submit(auto, { size: 'large' });
    expect(submitted.state).toBe('APPROVED');
    autoItem = submitted.service_item;
    const run = await waitFor(
      async () => {
        const answer = await latest(autoItem);
        return answer.status === 200 && answer.body;
      },
      { what: 'the approval recorded as a pipeline with nothing started' },
    );
    expect(run.stages).toMatchObject([
      { stage: 'CONFIG', state: null, started_at: null, error: expect.stringMatching(NOT_STARTED) },
      { stage: 'VERIFY', state: null, error: null },
      { stage: 'EXECUTION', state: null, error: null },
    ]);
    expect(run.total_cost).toBe('0');
    expect((await instance(submitted.id)).state).toBe('APPROVED');

    const orchestrator = stack.service('pipeline-orchestrator');
    // No stage runs, so the stage sweeper has nothing to watch: none of its later rounds changes the run.
    const stored = await storedCollection(orchestrator, 'pipelines');
    expect(stored.find((one) => one.service_item_id === autoItem)).toMatchObject({ watched: false });
    for (const request of [
      () => trigger(autoItem, 'config'),
      () => asOwner('POST', `${PACK}retrigger/service_item/${autoItem}/`, { feedback: 'try again' }),
    ]) {
      const refused = await expectRefused(orchestrator, request, 409, [SETTING]);
      expect(refused.body.detail).toContain('show_ai_processor is off');
    }

    // PackData is not AI: it is stored, and the next stage says why it did not start.
    const pushed = await asOwner('POST', `${PACK}data/service_item/${autoItem}/config/`, {
      vm: 'from outside',
    });
    expect(pushed.status).toBe(201);
    expect(pushed.body.pipeline.stages).toMatchObject([
      { stage: 'CONFIG', state: 'OK', origin: 'pushed', pack_data: { vm: 'from outside' } },
      { stage: 'VERIFY', state: null, error: expect.stringMatching(NOT_STARTED) },
      { stage: 'EXECUTION', state: null },
    ]);

    // An error report asking for a retrigger: stored, and the run ends FAILED saying why it did not restart.
    const report = await asOwner('POST', `${PACK}data/service_item/${autoItem}/execution/?retrigger=true`, {
      errors: ['port 443 closed'],
    });
    expect(report.status).toBe(201);
    expect(report.body.retrigger).toBeNull();
    expect(report.body.pipeline.stages[2]).toMatchObject({
      state: 'OK',
      pack_data: { errors: ['port 443 closed'] },
    });
    const failed = await waitFor(
      async () => {
        const body = await instance(submitted.id);
        return body.state === 'FAILED' && body;
      },
      { what: 'the Change Instance FAILED with the reason' },
    );
    expect(failed.reasons).toEqual([expect.stringMatching(/not restarted: AI processors are switched off/)]);
    expect(calls()).toBe(before);
  });

  it('switched on again, without a restart: the stage starts, runs to the end, and the validator decides', async () => {
    const ai = await switchAi({ show_ai_validator: true, show_ai_processor: true });
    expect(ai).toMatchObject({ show_ai_validator: true, show_ai_processor: true, show_ai_integration: true });
    await orchestratorSees(true);
    const before = calls();
    fake.scriptReplies('{"checked":true}', '{"delivered":true}');
    expect((await trigger(autoItem, 'verify')).status).toBe(202);
    const done = await waitFor(
      async () => {
        const answer = await latest(autoItem);
        return answer.body.stages[2].pack_data?.delivered === true && answer.body;
      },
      { what: 'VERIFY and EXECUTION run' },
    );
    expect(done.stages).toMatchObject([
      { state: 'OK', origin: 'pushed' },
      { state: 'OK', error: null, pack_data: { checked: true } },
      { state: 'OK', origin: 'generated', pack_data: { delivered: true } },
    ]);
    // The run's end asks the Pack Optimizer again; the run that ended while the switch was off asked it nothing.
    const optimizerPrompts = () =>
      fake
        .requestsTo('/chat/completions')
        .map((request) => JSON.stringify(request.body))
        .filter((prompt) => prompt.includes('Do pack_optimizer.'));
    await waitFor(async () => optimizerPrompts().length > 0, { what: 'the Pack Optimizer asked' });
    expect(optimizerPrompts()).toEqual([expect.stringContaining('ended COMPLETED')]);
    expect(calls()).toBe(before + 3);

    fake.scriptReplies('{"decision":"approve","reasons":["small enough"]}');
    const decided = await submit(validated, { size: 'tiny' });
    const approved = await waitFor(
      async () => {
        const body = await instance(decided.id);
        return body.state === 'APPROVED' && body;
      },
      { what: 'the validator approval' },
    );
    expect(approved.history.at(-1)).toMatchObject({ to: 'APPROVED', by: { kind: 'validator' } });
  });

  it('"show_ai_processor" switched off while a stage runs: the stage finishes, the next one does not start and says why', async () => {
    const service = await actors().serviceWith('Running', model, ['config', 'verify']);
    // The provider holds CONFIG's reply until the switch has reached the orchestrator.
    let release!: () => void;
    fake.next({ until: new Promise<void>((resolve) => (release = resolve)) }).scriptReplies('{"vm":"held"}');
    const before = calls();
    const { item } = await actors().approved(service, { size: 'medium' });
    await waitFor(async () => calls() > before, { what: 'CONFIG sent to the provider' });
    await switchAi({ show_ai_processor: false });
    await orchestratorSees(false);
    expect((await latest(item)).body.stages[0].state).toBe('WAITING_FOR_RESPONSE');
    release();
    const ended = await waitFor(
      async () => {
        const answer = await latest(item);
        return answer.body.stages[0].state === 'OK' && answer.body;
      },
      { what: 'CONFIG to finish' },
    );
    expect(ended.stages).toMatchObject([
      { stage: 'CONFIG', state: 'OK', pack_data: { vm: 'held' }, cost: '0.000006' },
      { stage: 'VERIFY', state: null, error: expect.stringMatching(NOT_STARTED) },
      { stage: 'EXECUTION', state: null },
    ]);
    expect(calls()).toBe(before + 1);
    await switchAi({ show_ai_processor: true });
  });
});
