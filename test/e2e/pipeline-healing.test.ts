import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricSample, metricsText, startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { expectRefused, modelKnownToOrchestrator, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-healing-0000';
const PACK = '/v1/external/serviceowner/pack/';

/**
 * The pipeline's flows through the gateway with the real catalog, llm-gateway and webhook
 * dispatcher: Change Instance progress and its webhooks, a failure healed by a retrigger with
 * feedback, and PackData pushed from outside.
 */
describe('pipelines healing themselves, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let receiver: http.Server;
  let target = '';
  const received: { body: string }[] = [];
  let ownerToken: string;
  let consumerToken: string;
  let model: number;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ body: Buffer.concat(chunks).toString('utf8') });
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
    const created = await stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name: 'Healing model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(created.status).toBe(201);
    model = created.body.id as number;
    await modelKnownToOrchestrator(stack, model);
  });
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  const actors = () => pipelineActors(stack, ownerToken, consumerToken);
  const asOwner = (method: string, path: string, body?: unknown) => actors().asOwner(method, path, body);
  const serviceWith = (name: string, kinds: string[]) => actors().serviceWith(name, model, kinds);
  const approved = (service: number, declaration: object) => actors().approved(service, declaration);
  const latest = (item: number) => asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
  const stateOf = async (item: number, index: number) => (await latest(item)).body?.stages?.[index]?.state;
  const prompts = () => fake.requestsTo('/chat/completions').map((request) => JSON.stringify(request.body));

  const instanceState = async (id: number) =>
    (await asOwner('GET', `/v1/catalog/change_instances/${id}/`)).body?.state as string | undefined;

  it('moves the Change Instance to COMPLETED after an automatic pipeline, and its webhook fires', async () => {
    const service = await serviceWith('Hooked pipeline', ['config', 'verify', 'execution']);
    await waitFor(
      async () =>
        (
          await asOwner('POST', '/v1/external/serviceowner/webhooks/', {
            name: 'Delivered',
            description: 'tells the CMDB',
            service,
            target_url: target,
            authorization: 'Bearer cmdb',
            change_instance_state: 'COMPLETED',
          })
        ).status === 201,
      { what: 'the webhook (the dispatcher learns the Service from its event)' },
    );
    fake.scriptReplies('{"vm":"c2"}', '{"checked":true}', '{"delivered":true}');
    const { instance, item } = await approved(service, { size: 'large' });
    await waitFor(async () => (await stateOf(item, 2)) === 'OK', { what: 'EXECUTION OK', timeoutMs: 30_000 });
    await waitFor(async () => (await instanceState(instance)) === 'COMPLETED', {
      what: 'instance COMPLETED',
    });
    const hook = await waitFor(() => received.find((request) => JSON.parse(request.body).id === service), {
      what: 'the COMPLETED webhook',
    });
    expect(JSON.parse(hook.body)).toMatchObject({ id: service, state: 'COMPLETED' });
    const history = (await asOwner('GET', `/v1/catalog/change_instances/${instance}/`)).body.history;
    expect(history.map((step: { to: string }) => step.to)).toEqual([
      'PENDING',
      'APPROVED',
      'IN_PROGRESS',
      'COMPLETED',
    ]);
  });

  it('heals a failed CONFIG: the retrigger prompt holds the feedback and the earlier error', async () => {
    const service = await serviceWith('Healing', ['config', 'verify']);
    // The provider's own text may quote the key (here lower-cased, as the issue found): the owner
    // reads a classification and the provider's error code, never that text.
    fake.next({
      fault: { kind: 'status', status: 400, message: `context window exceeded for key ${KEY.toLowerCase()}` },
    });
    const { instance, item } = await approved(service, { size: 'huge' });
    await waitFor(async () => (await stateOf(item, 0)) === 'FAILED', {
      what: 'CONFIG FAILED',
      timeoutMs: 30_000,
    });
    const failed = (await latest(item)).body.stages[0].error as string;
    expect(failed).toBe(
      'http_status: the provider refused the request, HTTP 400 (provider error code invalid_request_error)',
    );
    await waitFor(async () => (await instanceState(instance)) === 'FAILED', { what: 'instance FAILED' });

    const before = prompts().length;
    fake.scriptReplies('{"vm":"small"}', '{"checked":true}');
    const again = await asOwner('POST', `${PACK}retrigger/service_item/${item}/`, {
      feedback: 'Shorten the configuration; one VM is enough.',
    });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ service_item: item, run: 2 });
    await waitFor(async () => (await stateOf(item, 1)) === 'OK', {
      what: 'run 2 VERIFY OK',
      timeoutMs: 30_000,
    });
    const config = prompts()[before]!;
    expect(config).toContain('Feedback on run 1: Shorten the configuration; one VM is enough.');
    expect(config).toContain(`- CONFIG: FAILED (error: ${JSON.stringify(failed).slice(1, -1)})`);
    // Back to IN_PROGRESS with the retrigger; with no active execution processor the run ends
    // once VERIFY is OK (docs/decisions/0026).
    await waitFor(async () => (await instanceState(instance)) === 'COMPLETED', {
      what: 'instance COMPLETED',
    });
    const history = (await asOwner('GET', `/v1/catalog/change_instances/${instance}/`)).body.history;
    expect(history.map((step: { to: string }) => step.to)).toEqual([
      'PENDING',
      'APPROVED',
      'IN_PROGRESS',
      'FAILED',
      'IN_PROGRESS',
      'COMPLETED',
    ]);
  });

  it('lets PackData pushed from outside drive the next stage, and EXECUTION errors pushed with retrigger=true restart CONFIG', async () => {
    const service = await serviceWith('Pushed', ['config', 'verify', 'execution']);
    fake.scriptReplies('{"vm":"c1"}', '{"checked":true}', '{"delivered":true}');
    const { item } = await approved(service, { size: 'medium' });
    await waitFor(async () => (await stateOf(item, 2)) === 'OK', { what: 'run 1 done', timeoutMs: 30_000 });

    expect(
      (await asOwner('POST', `${PACK}data/service_item/${item}/verify/`, ['not', 'an object'])).status,
    ).toBe(400);
    expect((await asOwner('POST', `${PACK}data/service_item/${item}/deploy/`, { a: 1 })).status).toBe(404);
    const before = prompts().length;
    fake.scriptReplies('{"delivered":"again"}');
    const pushed = await asOwner('POST', `${PACK}data/service_item/${item}/verify/`, {
      verdict: 'approved by QA',
    });
    expect(pushed.status).toBe(201);
    expect(pushed.body.pipeline.stages[1]).toMatchObject({
      origin: 'pushed',
      pack_data: { verdict: 'approved by QA' },
    });
    await waitFor(async () => (await latest(item)).body.stages[2].pack_data?.delivered === 'again', {
      what: 'EXECUTION run on the pushed VERIFY data',
      timeoutMs: 30_000,
    });
    expect(prompts()[before]).toContain(
      'PackData of the VERIFY stage:\\n{\\"verdict\\":\\"approved by QA\\"}',
    );

    fake.scriptReplies('{"vm":"c3"}', '{"checked":"again"}', '{"delivered":"fixed"}');
    const report = await asOwner('POST', `${PACK}data/service_item/${item}/execution/?retrigger=true`, {
      errors: ['smoke test: port 443 closed'],
    });
    expect(report.status).toBe(201);
    expect(report.body.retrigger).toMatchObject({ service_item: item, run: 2 });
    await waitFor(async () => prompts().length > before + 1, { what: 'the retriggered CONFIG call' });
    expect(prompts()[before + 1]).toContain(
      'PackData pushed from outside: {\\"errors\\":[\\"smoke test: port 443 closed\\"]}',
    );
    // The new run goes on to the end (and uses up the scripted replies).
    await waitFor(async () => (await latest(item)).body.stages[2].pack_data?.delivered === 'fixed', {
      what: 'run 2 done',
      timeoutMs: 30_000,
    });
  });

  it('lets the Change Instance Validator approve one submission and reject another', async () => {
    const service = await serviceWith('Validated', ['change_instance_validator']);
    const submit = async (declaration: object) => {
      const submitted = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
        token: consumerToken,
        body: { declaration },
      });
      expect(submitted.status).toBe(201);
      return submitted.body.change_instance.id as number;
    };
    fake.scriptReplies('{"decision":"approve","reasons":["small enough"]}');
    const approvedOne = await submit({ size: 'small' });
    const approval = await waitFor(
      async () => {
        const body = (await asOwner('GET', `/v1/catalog/change_instances/${approvedOne}/`)).body;
        return body.state === 'APPROVED' && body;
      },
      { what: 'the validator approval', timeoutMs: 30_000 },
    );
    expect(approval.reasons).toEqual(['small enough']);
    expect(approval.validation).toMatchObject({ decision: 'approve', reason: null });
    expect(approval.history.at(-1)).toMatchObject({
      from: 'PENDING',
      to: 'APPROVED',
      by: { kind: 'validator' },
    });

    fake.scriptReplies('{"decision":"reject","reasons":["no capacity for XXL"]}');
    const rejectedOne = await submit({ size: 'XXL' });
    const rejection = await waitFor(
      async () => {
        const body = (await asOwner('GET', `/v1/catalog/change_instances/${rejectedOne}/`)).body;
        return body.state === 'REJECTED' && body;
      },
      { what: 'the validator rejection', timeoutMs: 30_000 },
    );
    expect(rejection.reasons).toEqual(['no capacity for XXL']);
    const asked = prompts().filter((prompt) => prompt.includes('Approve or reject this declaration'));
    expect(asked.at(-1)).toContain('{\\"size\\":\\"XXL\\"}');
    expect(asked.at(-1)).toContain('decision');
  });

  it("reads the Pack Optimizer's notes of a Service through a route, newest first, paged, its owner's only", async () => {
    const service = await serviceWith('Optimized', ['config', 'pack_optimizer']);
    const notes = `/v1/ai/services/${service}/optimizer_notes/`;
    const notesOf = (query = '', token: string | null = ownerToken) =>
      stack.call('GET', `${notes}${query}`, { token });
    fake.scriptReplies('{"vm":"o1"}', 'Run 1: the VM was too small; ask for two.');
    const { item } = await approved(service, { size: 'optimized' });
    await waitFor(async () => (await notesOf()).body?.count === 1, {
      what: 'the first run ends and the optimizer writes',
      timeoutMs: 30_000,
    });
    fake.scriptReplies('{"vm":"o2"}', 'Run 2: two VMs worked.');
    expect((await asOwner('POST', `${PACK}retrigger/service_item/${item}/`)).status).toBe(202);
    const page = await waitFor(
      async () => {
        const read = await notesOf();
        return read.body?.count === 2 && read.body;
      },
      { what: 'the second note', timeoutMs: 30_000 },
    );
    const run2 = (await latest(item)).body.id as number;
    expect(page.results).toMatchObject([
      {
        service,
        service_item: item,
        pipeline: run2,
        run: 2,
        processor_name: 'Optimized pack_optimizer',
        text: 'Run 2: two VMs worked.',
      },
      { service_item: item, run: 1, text: 'Run 1: the VM was too small; ask for two.' },
    ]);
    const second = await notesOf('?limit=1&offset=1');
    expect(second.body).toMatchObject({ count: 2, results: [{ run: 1 }] });
    expect(second.body.previous).toContain('offset=0');
    const processor = page.results[0].processor as number;
    expect((await notesOf(`?processor=${processor}&service_item=${item}`)).body.count).toBe(2);
    expect((await notesOf(`?processor=${processor + 1000}`)).body.count).toBe(0);

    const orchestrator = stack.service('pipeline-orchestrator');
    await expectRefused(orchestrator, () => notesOf('?limit=0'), 400, ['query.limit']);
    expect((await notesOf('', null)).status).toBe(401);
    await expectRefused(orchestrator, () => notesOf('', consumerToken), 403);
    const other = await stack.issueToken('service_owner');
    await expectRefused(orchestrator, () => notesOf('', other), 404);
    expect((await notesOf('', stack.adminToken)).body.count).toBe(2);
  });

  it('records a validator reply without a decision on the Change Instance, with the reason, and counts it', async () => {
    const service = await serviceWith('Undecided', ['change_instance_validator']);
    const metrics = () => metricsText(stack.service('pipeline-orchestrator').metricsUrl);
    const undecided = (text: string) =>
      metricSample(text, 'pipeline_validations_undecided_total', { cause: 'generation_failed' });
    const before = undecided(await metrics());
    // Not a {decision, reasons} object, asked and re-asked: the validator gives no decision.
    fake.scriptReplies('I would rather not say.', 'Still no opinion.');
    const submitted = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
      token: consumerToken,
      body: { declaration: { size: 'unclear' } },
    });
    expect(submitted.status).toBe(201);
    const id = submitted.body.change_instance.id as number;
    const recorded = await waitFor(
      async () => {
        const body = (await asOwner('GET', `/v1/catalog/change_instances/${id}/`)).body;
        return body.validation && body;
      },
      { what: 'the validation recorded on the Change Instance', timeoutMs: 30_000 },
    );
    expect(recorded.state).toBe('PENDING');
    expect(recorded.validation).toMatchObject({ decision: null });
    expect(recorded.validation.reason).toMatch(/^structured_output: /);
    expect(Date.parse(recorded.validation.at)).not.toBeNaN();
    expect(recorded.history.map((step: { to: string }) => step.to)).toEqual(['PENDING']);
    // The list shows it too, and the owner still decides.
    const listed = await asOwner('GET', `/v1/catalog/change_instances/?service=${service}&state=ALL`);
    expect(listed.body.results.find((row: { id: number }) => row.id === id)?.validation).toEqual(
      recorded.validation,
    );
    expect(undecided(await metrics()) - before).toBe(1);
    const approval = await asOwner('PATCH', `/v1/catalog/change_instances/${id}/`, { state: 'APPROVED' });
    expect(approval.status).toBe(200);
    expect(approval.body.validation).toEqual(recorded.validation);
  });
});
