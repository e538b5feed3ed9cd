/**
 * The spec's pipeline rules at their edges, through the gateway: PackData pushed into
 * EXECUTION, the generative UI fallback with the default settings, a retrigger superseding the
 * run in progress, an executor's failed report, unpriced costs, and triggers on the latest
 * approved declaration (docs/decisions/0024, 0026, 0027).
 */
import { type FakeProviderServer, startFakeOpenAi, storedCollection, waitFor } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { modelKnownToOrchestrator, modelOnFakeProvider, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-spec-rules-0000';
const PACK = '/v1/external/serviceowner/pack/';
const UNSUPPORTED_UI = { components: [{ type: 'chart', props: { series: [1, 2] } }] };

describe('pipeline rules of the spec, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let actors: ReturnType<typeof pipelineActors>;
  let consumerToken: string;
  let priced: number;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    let ownerToken: string;
    [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(stack, ownerToken, consumerToken);
    priced = await modelOnFakeProvider(stack, 'Spec rules model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, priced);
  });
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
  });

  const asOwner = (method: string, path: string, body?: unknown) => actors.asOwner(method, path, body);
  const latest = async (item: number) =>
    (await asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`)).body;
  const pipeline = async (id: number) => (await asOwner('GET', `${PACK}pipelines/${id}/`)).body;
  const instance = async (id: number) => (await asOwner('GET', `/v1/catalog/change_instances/${id}/`)).body;
  const push = (item: number, stage: string, body: object, query = '') =>
    asOwner('POST', `${PACK}data/service_item/${item}/${stage}/${query}`, body);
  const chats = () => fake.requestsTo('/chat/completions');
  /** The item's latest pipeline once stage `index` is in `state`, other than pipeline `not`. */
  const reached = (item: number, index: number, state: string, not?: number) =>
    waitFor(
      async () => {
        const body = await latest(item);
        return body?.id !== not && body?.stages?.[index]?.state === state && body;
      },
      { what: `stage ${index} ${state}` },
    );
  /** The orchestrator has heard of the item's (latest) approval. */
  const itemKnown = (item: number, instance?: number) =>
    waitFor(
      async () => {
        const items = await storedCollection(stack.service('pipeline-orchestrator'), 'service_items');
        return items.some(
          (known) => known._id === item && (instance === undefined || known.change_instance_id === instance),
        );
      },
      { what: `the orchestrator to hear of item ${item}'s approval` },
    );
  const instanceIn = (id: number, state: string) =>
    waitFor(
      async () => {
        const body = await instance(id);
        return body.state === state && body;
      },
      { what: `Change Instance ${id} ${state}` },
    );

  describe('spec endpoint rule 4: pushed error details "may retrigger the workflow"', () => {
    /** One approved declaration whose CONFIG and VERIFY ran: the outside executor's turn. */
    async function readyForTheExecutor(size: string) {
      const service = await actors.serviceWith(`Outside executor ${size}`, priced, ['config', 'verify']);
      fake.scriptReplies(`{"vm":"${size}"}`, '{"checked":true}');
      const { instance: id, item } = await actors.approved(service, { size });
      const run = await reached(item, 1, 'OK');
      return { id, item, run };
    }

    it('an outside executor reporting success completes the Change Instance and starts no run', async () => {
      const { id, item, run } = await readyForTheExecutor('s');
      const calls = chats().length;
      const pushed = await push(item, 'execution', { deployed: true, url: 'https://shop.example' });
      expect(pushed.status).toBe(201);
      expect(pushed.body.retrigger).toBeNull();
      expect(pushed.body.pipeline).toMatchObject({ id: run.id, run: run.run });
      expect(pushed.body.pipeline.stages[2]).toMatchObject({
        state: 'OK',
        origin: 'pushed',
        pack_data: { deployed: true, url: 'https://shop.example' },
      });
      const done = await instanceIn(id, 'COMPLETED');
      expect(done.history.map((step: { to: string }) => step.to)).toEqual([
        'PENDING',
        'APPROVED',
        'IN_PROGRESS',
        'COMPLETED',
      ]);
      expect((await latest(item)).id).toBe(run.id);
      expect(chats()).toHaveLength(calls);
    });

    it('an outside executor reporting errors with retrigger=true restarts from CONFIG with them; past 3 retriggers none starts (the Change Instance, COMPLETED when VERIFY ended, stays so)', async () => {
      const { id, item, run } = await readyForTheExecutor('m');
      // No active EXECUTION processor: the run ended with VERIFY (docs/decisions/0026).
      await instanceIn(id, 'COMPLETED');
      let previous = run.id as number;
      for (let lap = 1; lap <= 3; lap += 1) {
        fake.scriptReplies(`{"vm":"m${lap}"}`, '{"checked":true}');
        const report = await push(
          item,
          'execution',
          { errors: [`smoke test ${lap} failed`] },
          '?retrigger=true',
        );
        expect(report.status).toBe(201);
        expect(report.body.retrigger).toMatchObject({ service_item: item, run: run.run + lap });
        const next = await reached(item, 1, 'OK', previous);
        expect(next.id).toBe(report.body.retrigger.id);
        previous = next.id;
      }
      const calls = chats().length;
      const past = await push(item, 'execution', { errors: ['smoke test 4 failed'] }, '?retrigger=true');
      expect(past.status).toBe(201);
      expect(past.body.retrigger).toBeNull();
      expect(past.body.pipeline.stages[2]).toMatchObject({ state: 'OK', origin: 'pushed' });
      // COMPLETED is final: the later runs and the bounded push show in the pipeline only.
      const done = await instance(id);
      expect(done.state).toBe('COMPLETED');
      expect(done.history.map((step: { to: string }) => step.to)).toEqual([
        'PENDING',
        'APPROVED',
        'IN_PROGRESS',
        'COMPLETED',
      ]);
      expect((await latest(item)).id).toBe(previous);
      expect(chats()).toHaveLength(calls);
    });

    it('retrigger=true without an active config processor is refused, nothing stored', async () => {
      const bare = await actors.serviceWith('Executor without config', priced, ['verify']);
      const { item } = await actors.approved(bare, { size: 'xs' });
      await itemKnown(item);
      const refused = await push(item, 'execution', { errors: ['x'] }, '?retrigger=true');
      expect(refused.status).toBe(409);
      expect((await asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`)).status).toBe(404);
      expect((await push(item, 'execution', { errors: ['x'] }, '?retrigger=maybe')).status).toBe(400);
    });
  });

  it('"If the response is invalid or uses unsupported components, the UI falls back to the standard response renderer" (default settings)', async () => {
    const service = await actors.serviceWith('Fallback UI', priced, []);
    const processor = async (kind: string, extra: object) =>
      waitFor(
        async () =>
          (
            await asOwner('POST', '/v1/ai/processors/', {
              name: `Fallback ${kind}`,
              service,
              kind,
              llm_model: priced,
              prompt: `Do ${kind}.`,
              active: true,
              ...extra,
            })
          ).status === 201,
        { what: `the ${kind} processor` },
      );
    await processor('config', { generative_ui: true });
    await processor('verify', {
      generative_ui: true,
      response_schema: { type: 'object', properties: { passed: { type: 'boolean' } }, required: ['passed'] },
    });
    // Each stage: the reply and the llm-gateway's one re-ask, both with an unsupported component.
    const combined = JSON.stringify({ data: { passed: true }, gen_ui: UNSUPPORTED_UI });
    fake.scriptReplies(JSON.stringify(UNSUPPORTED_UI), JSON.stringify(UNSUPPORTED_UI), combined, combined);
    const { item } = await actors.approved(service, { namespace: 'team-ui' });
    const run = await reached(item, 1, 'OK');
    expect(run.stages[0]).toMatchObject({
      state: 'OK',
      error: null,
      pack_data: UNSUPPORTED_UI,
      gen_ui: UNSUPPORTED_UI,
      gen_ui_valid: false,
    });
    expect(run.stages[1]).toMatchObject({
      state: 'OK',
      error: null,
      pack_data: { passed: true },
      gen_ui: UNSUPPORTED_UI,
      gen_ui_valid: false,
    });
    expect(run.stages[1].gen_ui_error).toContain('components.0.type: unsupported component "chart"');

    // Only invalid data fails the stage: `passed` must be a boolean.
    const bad = JSON.stringify({ data: { passed: 'yes' }, gen_ui: UNSUPPORTED_UI });
    fake.scriptReplies(JSON.stringify(UNSUPPORTED_UI), JSON.stringify(UNSUPPORTED_UI), bad, bad);
    const again = await asOwner('POST', `${PACK}retrigger/service_item/${item}/`);
    expect(again.status).toBe(202);
    const failed = await reached(item, 1, 'FAILED', run.id);
    expect(failed.stages[0]).toMatchObject({ state: 'OK', gen_ui_valid: false });
    expect(failed.stages[1].error).toMatch(/^structured_output: /);
  });

  it('spec 3.1 rule 4 "Retrigger restarts the pipeline from CONFIG": the run in progress is superseded, its late result recorded with its cost', async () => {
    const service = await actors.serviceWith('Superseded', priced, ['config', 'verify']);
    fake.reply = { text: '{"vm":"fast"}' };
    // Run 1's CONFIG answer is held until the retrigger was taken, however long that takes.
    let release!: () => void;
    fake.next({ until: new Promise<void>((resolve) => (release = resolve)) });
    const calls = fake.requestsTo('/chat/completions').length;
    const { item } = await actors.approved(service, { size: 'slow' });
    const first = await reached(item, 0, 'WAITING_FOR_RESPONSE');
    await waitFor(() => fake.requestsTo('/chat/completions').length > calls, { what: "run 1's held call" });
    const again = await asOwner('POST', `${PACK}retrigger/service_item/${item}/`, {
      feedback: 'Try again, faster.',
    });
    expect(again.status).toBe(202);
    const second = await reached(item, 1, 'OK', first.id);
    expect(second.id).toBe(again.body.id);
    release();
    const old = await waitFor(
      async () => {
        const body = await pipeline(first.id);
        return body.stages[0].state === 'OK' && body;
      },
      { what: 'the slow CONFIG result of run 1' },
    );
    expect(old).toMatchObject({ superseded_by: second.id, total_cost: '0.000006' });
    expect(old.stages[0]).toMatchObject({ superseded: true, pack_data: { vm: 'fast' }, cost: '0.000006' });
    expect(old.stages[1]).toMatchObject({ state: null, superseded: false });
    expect(second).toMatchObject({ superseded_by: null, total_cost: '0.000012' });
    expect((await latest(item)).id).toBe(second.id);
    fake.reply = { text: 'Hello from the fake provider.' };
  });

  it('spec 3.1 FAILED "Stage execution failed": a Universal Executor answering status failed fails EXECUTION', async () => {
    const service = await actors.serviceWith('Executor says no', priced, [
      'config',
      'verify',
      'universal_executor',
    ]);
    const report = { status: 'failed', summary: 'helm upgrade timed out', steps: [], output: {} };
    fake.scriptReplies('{"vm":"e"}', '{"checked":true}', JSON.stringify(report));
    const { instance: id, item } = await actors.approved(service, { size: 'e' });
    const run = await reached(item, 2, 'FAILED');
    expect(run.stages[2]).toMatchObject({ error: 'executor: helm upgrade timed out', pack_data: report });
    const failed = await instanceIn(id, 'FAILED');
    expect(failed.reasons).toEqual(['EXECUTION: executor: helm upgrade timed out']);
  });

  it('spec 2.2 costs: a pipeline and the dashboard with an unpriced call say their totals cover priced calls only', async () => {
    const created = await stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name: 'Unpriced model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(created.status).toBe(201);
    await modelKnownToOrchestrator(stack, created.body.id);
    const service = await actors.serviceWith('Unpriced', created.body.id, ['config']);
    fake.scriptReplies('{"vm":"free?"}');
    const { item } = await actors.approved(service, { size: 'u' });
    const run = await reached(item, 0, 'OK');
    expect(run).toMatchObject({ total_cost: '0', total_cost_covers: 'priced_calls_only', unpriced_calls: 1 });
    expect(run.stages[0]).toMatchObject({ cost: null, unpriced: true });
    // The dashboard's totals say the same of the unpriced model's calls.
    const board = await waitFor(
      async () => {
        const read = await stack.call('GET', '/v1/ai/dashboard/?group_by=model');
        const group = read.body.groups?.find((entry: { key: number }) => entry.key === created.body.id);
        return group?.calls === 1 && read.body;
      },
      { what: 'the unpriced call in the dashboard' },
    );
    expect(board.groups.find((entry: { key: number }) => entry.key === created.body.id)).toMatchObject({
      cost: '0',
      unpriced_calls: 1,
      cost_covers: 'priced_calls_only',
    });
    expect(board.totals).toMatchObject({ cost_covers: 'priced_calls_only' });
  });

  it('spec endpoint rule 2: a VERIFY trigger "takes the latest approved declaration of the Service Item"', async () => {
    const service = await actors.serviceWith('Latest declaration', priced, ['verify']);
    const first = await actors.approved(service, { size: 'first' });
    await itemKnown(first.item, first.instance);
    fake.scriptReplies('{"checked":"first"}');
    expect((await push(first.item, 'config', { vm: 'by hand' })).status).toBe(201);
    const run1 = await reached(first.item, 1, 'OK');
    const second = await actors.approved(service, { size: 'second' });
    expect(second.item).toBe(first.item);
    await itemKnown(first.item, second.instance);
    fake.scriptReplies('{"checked":"second"}');
    const calls = chats().length;
    const triggered = await asOwner('POST', `${PACK}trigger/service_item/${first.item}/verify/`);
    expect(triggered.status).toBe(202);
    const run2 = await reached(first.item, 1, 'OK', run1.id);
    expect(run2.stages[0]).toMatchObject({ state: 'OK', pack_data: { vm: 'by hand' } });
    const prompt = JSON.stringify(chats()[calls]!.body);
    expect(prompt).toContain('{\\"size\\":\\"second\\"}');
    expect(prompt).not.toContain('{\\"size\\":\\"first\\"}');
    // The trigger moved the second approval's instance on; with no active EXECUTION processor
    // the run ends with VERIFY (docs/decisions/0026).
    const done = await instanceIn(second.instance, 'COMPLETED');
    expect(done.history.map((step: { to: string }) => step.to)).toEqual([
      'PENDING',
      'APPROVED',
      'IN_PROGRESS',
      'COMPLETED',
    ]);
  });

  it('spec endpoint rules 2 and 3: a trigger and a retrigger take "the latest approved declaration of the Service Item", the one approved last (the catalog\'s), even when it is the older declaration', async () => {
    const service = await actors.serviceWith('Approved last', priced, ['config', 'verify']);
    const submit = async (declaration: object) => {
      const submitted = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
        token: consumerToken,
        body: { declaration },
      });
      expect(submitted.status).toBe(201);
      return submitted.body.change_instance as { id: number; service_item: number };
    };
    const approve = async (id: number) =>
      expect(
        (await asOwner('PATCH', `/v1/catalog/change_instances/${id}/`, { state: 'APPROVED' })).status,
      ).toBe(200);
    const d1 = await submit({ v: 1 });
    const d2 = await submit({ v: 2 });
    const item = d1.service_item;
    expect(d2.service_item).toBe(item);
    await approve(d2.id);
    const run1 = await reached(item, 1, 'OK');
    await approve(d1.id);
    const run2 = await reached(item, 1, 'OK', run1.id);
    const catalog = await asOwner('GET', `/v1/catalog/service_items/${item}/latest_approved_declaration/`);
    expect(catalog.body).toMatchObject({ change_instance: d1.id, declaration: { v: 1 } });
    /** The declaration in the provider call made after the first `calls` calls. */
    const sent = async (calls: number) => {
      await waitFor(async () => chats().length > calls, { what: 'the provider call' });
      return JSON.stringify(chats()[calls]!.body);
    };

    let calls = chats().length;
    const triggered = await asOwner('POST', `${PACK}trigger/service_item/${item}/verify/`);
    expect(triggered.status).toBe(202);
    expect(triggered.body.id).toBe(run2.id);
    const verify = await sent(calls);
    expect(verify).toContain('{\\"v\\":1}');
    expect(verify).not.toContain('{\\"v\\":2}');
    await reached(item, 1, 'OK');

    calls = chats().length;
    const again = await asOwner('POST', `${PACK}retrigger/service_item/${item}/`);
    expect(again.status).toBe(202);
    // The execution context that follows may name D2 as an earlier run's declaration; the
    // declaration the run works on is the first user message.
    const config = JSON.parse(await sent(calls)) as { messages: { role: string; content: string }[] };
    const declaration = config.messages.find((message) => message.role === 'user')!.content;
    expect(declaration).toContain('{"v":1}');
    expect(declaration).not.toContain('{"v":2}');
    await reached(item, 1, 'OK', run2.id);
  });
});
