/**
 * Users' numbers kept digit for digit through the gateway (docs/decisions/0039): a
 * declaration, PackData pushed from outside and PackData a model generated may hold 19-digit
 * ids and long decimals that a double would round. Each is stored and read back exactly: from
 * the catalog, from the pipeline, and in the prompts the orchestrator sends the model (the
 * declaration, earlier stages' PackData, the execution context of a retriggered run).
 */
import { parseExactJson, stringifyExactJson } from '@pack/contracts';
import { startFakeOpenAi, waitFor, type CallResult, type FakeProviderServer } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { modelKnownToOrchestrator, modelOnFakeProvider, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-exact-numbers-0000';
const PACK = '/v1/external/serviceowner/pack/';
/** Numbers a double holds, written otherwise than JavaScript would (`3.10` is not Python 3.1). */
const AS_WRITTEN = '"python":3.10,"size":1.50,"n":1e2,"zero":-0,"tiny":0.0000001';
const DECLARATION =
  '{"namespace":"team-a","quota":15397106136189694148663395280224256,"ratio":0.12345678901234567890,' +
  `"vm":{"id":1234567890123456789,"disks":[{"serial":9223372036854775807}]},${AS_WRITTEN}}`;
/** What the CONFIG processor's model answers (OpenAI JSON shape: the content is JSON text). */
const GENERATED = `{"cluster_id":1234567890123456789012,"ratio":0.12345678901234567890,${AS_WRITTEN}}`;
const PUSHED =
  '{"build":{"id":9223372036854775807},"quota":15397106136189694148663395280224256,' +
  `"ratio":0.12345678901234567890,${AS_WRITTEN}}`;

/** The JSON text of the part of an answer `pick` selects, read without rounding. */
const exactly = (answer: CallResult, pick: (body: any) => unknown) =>
  stringifyExactJson(pick(parseExactJson(answer.text)));

describe('numbers kept exactly as sent, text for text, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let actors: ReturnType<typeof pipelineActors>;
  let ownerToken: string;
  let consumerToken: string;
  let service: number;

  /** The user message of every chat completion the fake provider was asked for, in order. */
  const prompts = () =>
    fake.requestsTo('/chat/completions').map((request) =>
      (request.body as { messages: { role: string; content: string }[] }).messages
        .filter((message) => message.role === 'user')
        .map((message) => message.content)
        .join('\n'),
    );

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(stack, ownerToken, consumerToken);
    const model = await modelOnFakeProvider(stack, 'Exact model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, model);
    const owned = await actors.asOwner('POST', '/v1/catalog/services/', { name: 'Exact service' });
    expect(owned.status).toBe(201);
    service = owned.body.id;
    // CONFIG answers under a schema with integer and number checks; VERIFY answers free text.
    const processors = [
      {
        kind: 'config',
        response_schema: {
          type: 'object',
          properties: { cluster_id: { type: 'integer', minimum: 1 }, ratio: { type: 'number', maximum: 1 } },
          required: ['cluster_id', 'ratio'],
        },
      },
      { kind: 'verify' },
    ];
    for (const extra of processors) {
      const body = { name: `Exact ${extra.kind}`, service, llm_model: model, prompt: 'Do it.', active: true };
      await waitFor(
        async () =>
          (await actors.asOwner('POST', '/v1/ai/processors/', { ...body, ...extra })).status === 201,
        { what: `the ${extra.kind} processor` },
      );
    }
  });
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
  });

  /** The Service Item's latest pipeline once VERIFY is OK (the answer, its text unparsed). */
  const verified = (item: number) =>
    waitFor(
      async () => {
        const answer = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        return answer.body?.stages?.[1]?.state === 'OK' && answer;
      },
      { what: 'VERIFY OK' },
    );

  it("keeps a declaration's numbers in the catalog's reads and in the pipeline's prompt", async () => {
    const submitted = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
      token: consumerToken,
      raw: `{"declaration":${DECLARATION}}`,
    });
    expect(submitted.status).toBe(201);
    expect(exactly(submitted, (body) => body.declaration.declaration)).toBe(DECLARATION);
    const instance = submitted.body.change_instance.id as number;
    const item = submitted.body.change_instance.service_item as number;

    fake.scriptReplies(GENERATED, 'Verified.');
    const approval = await actors.asOwner('PATCH', `/v1/catalog/change_instances/${instance}/`, {
      state: 'APPROVED',
    });
    expect(approval.status).toBe(200);
    expect(exactly(approval, (body) => body.declaration)).toBe(DECLARATION);
    const detail = await actors.asOwner('GET', `/v1/catalog/change_instances/${instance}/`);
    expect(exactly(detail, (body) => body.declaration)).toBe(DECLARATION);
    const latest = await actors.asOwner(
      'GET',
      `/v1/catalog/service_items/${item}/latest_approved_declaration/`,
    );
    expect(exactly(latest, (body) => body.declaration)).toBe(DECLARATION);

    // The declaration reached the orchestrator in the catalog's event; the model saw it exactly.
    await verified(item);
    expect(prompts()[0]).toContain(`Latest approved declaration of Service Item ${item}:\n${DECLARATION}`);
  });

  it("keeps the numbers of a model's JSON reply in the pipeline's PackData and the next stage's prompt", async () => {
    const another = pipelineActors(stack, ownerToken, await stack.issueToken('consumer'));
    const asked = prompts().length;
    fake.scriptReplies(GENERATED, 'Verified.');
    const item = (await another.approved(service, { namespace: 'team-c' })).item;
    const run = await verified(item);
    expect(run.body.stages[0]).toMatchObject({ state: 'OK', error: null });
    expect(exactly(run, (body) => body.stages[0].pack_data)).toBe(GENERATED);
    expect(prompts()[asked + 1]).toContain(`PackData of the CONFIG stage:\n${GENERATED}`);
  });

  it("keeps pushed PackData's numbers in the pipeline and in the execution context of the retriggered run", async () => {
    // Another consumer: a Service Item of its own, whose first run is the one pushed into.
    const another = pipelineActors(stack, ownerToken, await stack.issueToken('consumer'));
    const item = (await another.approved(service, { namespace: 'team-b' })).item;
    fake.scriptReplies(GENERATED, 'Verified.', GENERATED, 'Verified again.');
    const first = await waitFor(
      async () => {
        const answer = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        return answer.body?.stages?.[1]?.state === 'OK' && answer.body;
      },
      { what: 'VERIFY OK' },
    );
    const asked = prompts().length;

    const pushed = await stack.call('POST', `${PACK}data/service_item/${item}/execution/?retrigger=true`, {
      token: ownerToken,
      raw: PUSHED,
    });
    expect(pushed.status).toBe(201);
    expect(exactly(pushed, (body) => body.pipeline.stages[2].pack_data)).toBe(PUSHED);
    expect(pushed.body.retrigger).not.toBeNull();
    expect(pushed.body.pipeline.id).toBe(first.id);
    const read = await actors.asOwner('GET', `${PACK}pipelines/${first.id}/`);
    expect(exactly(read, (body) => body.stages[2].pack_data)).toBe(PUSHED);

    // The new run's CONFIG prompt carries the execution context: the pushed data, exactly.
    await waitFor(async () => prompts().length > asked, { what: 'the retriggered CONFIG call' });
    expect(prompts()[asked]).toContain(`PackData pushed from outside: ${PUSHED}`);
  });
});
