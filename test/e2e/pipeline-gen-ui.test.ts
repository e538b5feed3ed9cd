/**
 * Generative UI through the gateway (spec 2.4 rules 1-5, docs/decisions/0023): the schema the
 * model receives follows the processor, the reply's `gen_ui` is checked against the component
 * registry, and an unsupported reply is kept with `gen_ui_valid: false` for clients to fall back.
 */
import { startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { modelKnownToOrchestrator, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-gen-ui-0000';
const PACK = '/v1/external/serviceowner/pack/';
const VALID_UI = {
  components: [
    { type: 'heading', props: { text: 'Namespace ready', level: 2 }, style: { color: 'success' } },
    { type: 'key_value', props: { items: [{ label: 'CPU', value: 8 }] } },
  ],
};
const UNSUPPORTED_UI = { components: [{ type: 'chart', props: { series: [1, 2] } }] };

describe('generative UI of pipeline stages through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let actors: ReturnType<typeof pipelineActors>;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    const [ownerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(stack, ownerToken, consumerToken);
  });
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
  });

  /** A processor of the owner's Service, retried until the Service has reached the orchestrator. */
  async function processor(service: number, model: number, kind: string, extra: object) {
    const body = { name: `UI ${kind}`, service, kind, llm_model: model, prompt: `Do ${kind}.`, active: true };
    await waitFor(
      async () => (await actors.asOwner('POST', '/v1/ai/processors/', { ...body, ...extra })).status === 201,
      { what: `the ${kind} processor` },
    );
  }

  /** The item's latest pipeline once its VERIFY is OK, other than `before` (a second declaration of one item). */
  const finished = (item: number, before?: number) =>
    waitFor(
      async () => {
        const answer = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        return answer.body?.id !== before && answer.body?.stages?.[1]?.state === 'OK' && answer.body;
      },
      { what: 'VERIFY OK' },
    );

  it('keeps a supported UI as valid, an unsupported one as not, and stores the data half of a combined reply', async () => {
    const model = await stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name: 'UI model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(model.status).toBe(201);
    await modelKnownToOrchestrator(stack, model.body.id);
    const owned = await actors.asOwner('POST', '/v1/catalog/services/', { name: 'UI service' });
    expect(owned.status).toBe(201);
    // CONFIG: generative UI alone (the catalog schema); VERIFY: a data schema and generative UI (combined).
    await processor(owned.body.id, model.body.id, 'config', { generative_ui: true });
    await processor(owned.body.id, model.body.id, 'verify', {
      generative_ui: true,
      response_schema: { type: 'object', properties: { passed: { type: 'boolean' } }, required: ['passed'] },
    });

    fake.scriptReplies(
      JSON.stringify(VALID_UI),
      JSON.stringify({ data: { passed: true }, gen_ui: VALID_UI }),
      JSON.stringify(UNSUPPORTED_UI),
      JSON.stringify({ data: { passed: false }, gen_ui: UNSUPPORTED_UI }),
    );
    const good = await finished((await actors.approved(owned.body.id, { namespace: 'team-a' })).item);
    expect(good.stages[0]).toMatchObject({ state: 'OK', gen_ui: VALID_UI, gen_ui_valid: true });
    expect(good.stages[1]).toMatchObject({
      state: 'OK',
      pack_data: { passed: true },
      gen_ui: VALID_UI,
      gen_ui_valid: true,
    });

    // The registry's catalog lets no unsupported component through the model's structured output;
    // an administrator's looser catalog schema can (spec 2.4 rule 1). One settings version also
    // hides charges, which shows when the orchestrator has it.
    const looser = {
      title: 'Anything with a type',
      type: 'object',
      properties: {
        components: {
          type: 'array',
          items: { type: 'object', properties: { type: { type: 'string' } }, required: ['type'] },
        },
      },
      required: ['components'],
    };
    const patched = await stack.call('PATCH', '/v1/core/general_settings/', {
      body: {
        ai_integration: { generative_ui_catalog_schema: looser },
        charges: { ENABLED: true, hide_for_serviceowners: true },
      },
    });
    expect(patched.status).toBe(200);
    await waitFor(
      async () => (await actors.asOwner('GET', `${PACK}pipelines/${good.id}/`)).body.total_cost === null,
      { what: 'the orchestrator to read the new settings' },
    );
    const bad = await finished((await actors.approved(owned.body.id, { namespace: 'team-b' })).item, good.id);
    // Stored as replied, flagged so a client renders it with the standard renderer instead.
    expect(bad.stages[0]).toMatchObject({ state: 'OK', gen_ui: UNSUPPORTED_UI, gen_ui_valid: false });
    expect(bad.stages[1]).toMatchObject({
      state: 'OK',
      pack_data: { passed: false },
      gen_ui: UNSUPPORTED_UI,
      gen_ui_valid: false,
    });

    // What the model was asked for: the registry's catalog for CONFIG, {data, gen_ui} for VERIFY.
    const schemas = fake
      .requestsTo('/chat/completions')
      .map((request) => JSON.stringify((request.body as { response_format?: unknown }).response_format));
    expect(schemas).toHaveLength(4);
    expect(schemas[0]).toContain('"key_value"');
    expect(schemas[1]).toMatch(/"required":\["data","gen_ui"\]/);
    expect(schemas[2]).toContain('Anything with a type');
  });
});
