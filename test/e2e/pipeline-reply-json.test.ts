/**
 * The JSON of a model's reply as a pipeline stage stores it, through the gateway
 * (docs/decisions/0023): a reply in a code fence or after a sentence (text-mode providers send
 * those often) is read like a bare one; the value a schema asks for is stored as it is, arrays
 * and scalars included; a reply without JSON fails a stage under a schema with the reason, and
 * under generative UI alone falls back to the standard renderer (spec 2.4 rule 4).
 */
import { startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import { modelKnownToOrchestrator, modelOnFakeProvider, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-reply-json-0000';
const PACK = '/v1/external/serviceowner/pack/';
const VALID_UI = { components: [{ type: 'heading', props: { text: 'Namespace ready', level: 2 } }] };
const UNSUPPORTED_UI = { components: [{ type: 'chart', props: { series: [1, 2] } }] };
const REPLICAS = {
  type: 'object',
  properties: { replicas: { type: 'integer' } },
  required: ['replicas'],
};

const fenced = (value: unknown) => `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``;
const prefixed = (value: unknown) => `Here is what you asked for:\n${JSON.stringify(value)}`;

describe('the JSON of a model reply stored by a pipeline stage, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let ownerToken: string;
  let service: number;
  let config: number;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    ownerToken = await stack.issueToken('service_owner');
    const model = await modelOnFakeProvider(stack, 'Reply model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, model);
    const actors = pipelineActors(stack, ownerToken, '');
    const owned = await actors.asOwner('POST', '/v1/catalog/services/', { name: 'Reply service' });
    expect(owned.status).toBe(201);
    service = owned.body.id;
    const body = {
      name: 'Reply config',
      service,
      kind: 'config',
      llm_model: model,
      prompt: 'Do config.',
      active: true,
    };
    config = await waitFor(
      async () => {
        const answer = await actors.asOwner('POST', '/v1/ai/processors/', body);
        return answer.status === 201 && (answer.body.id as number);
      },
      { what: 'the config processor' },
    );
  });
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
  });

  /**
   * The CONFIG stage of a new Service Item's first run, the config processor set as `processor`
   * says and the model answering `replies` (a reply that fails its schema is asked again once).
   */
  async function configStage(processor: object, ...replies: string[]) {
    const actors = pipelineActors(stack, ownerToken, await stack.issueToken('consumer'));
    const patched = await actors.asOwner('PATCH', `/v1/ai/processors/${config}/`, processor);
    expect(patched.status).toBe(200);
    fake.scriptReplies(...replies);
    const { item } = await actors.approved(service, { namespace: 'team-a' });
    return waitFor(
      async () => {
        const answer = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        const stage = answer.body?.stages?.[0];
        return (stage?.state === 'OK' || stage?.state === 'FAILED') && stage;
      },
      { what: 'CONFIG done' },
    );
  }

  describe('"If the response is invalid or uses unsupported components, the UI falls back to the standard response renderer"', () => {
    const uiAlone = { generative_ui: true, response_schema: null };

    it.each([
      ['in a code fence', fenced],
      ['after a sentence', prefixed],
    ])('reads an unsupported UI reply %s like a bare one: stage OK, UI flagged', async (_name, wrap) => {
      const stage = await configStage(uiAlone, wrap(UNSUPPORTED_UI), wrap(UNSUPPORTED_UI));
      expect(stage).toMatchObject({
        state: 'OK',
        pack_data: UNSUPPORTED_UI,
        gen_ui: UNSUPPORTED_UI,
        gen_ui_valid: false,
      });
      expect(stage.gen_ui_error).toContain('components.0.type: unsupported component "chart"');
    });

    it('keeps a reply without JSON as text data, the UI flagged with the reason', async () => {
      const stage = await configStage(uiAlone, 'I cannot draw that.', 'Still cannot draw that.');
      expect(stage).toMatchObject({
        state: 'OK',
        pack_data: { text: 'Still cannot draw that.' },
        gen_ui_valid: false,
      });
      expect(stage.gen_ui_error).toContain('not JSON');
    });
  });

  it.each([
    ['in a code fence', fenced({ replicas: 3 }), 3],
    ['after a sentence', prefixed({ replicas: 4 }), 4],
  ])('reads a custom schema reply %s like a bare one', async (_name, reply, replicas) => {
    const stage = await configStage({ generative_ui: false, response_schema: REPLICAS }, reply);
    expect(stage).toMatchObject({ state: 'OK', error: null, pack_data: { replicas }, gen_ui: null });
  });

  it('stores the array an array-root custom schema asks for as that array', async () => {
    const schema = { type: 'array', items: { type: 'integer' } };
    const stage = await configStage({ generative_ui: false, response_schema: schema }, '[1, 2, 3]');
    expect(stage).toMatchObject({ state: 'OK', error: null, pack_data: [1, 2, 3] });
  });

  it('stores combined-mode data that is an array as that array', async () => {
    const schema = { type: 'array', items: { type: 'string' } };
    const reply = JSON.stringify({ data: ['web', 'db'], gen_ui: VALID_UI });
    const stage = await configStage({ generative_ui: true, response_schema: schema }, reply);
    expect(stage).toMatchObject({
      state: 'OK',
      pack_data: ['web', 'db'],
      gen_ui: VALID_UI,
      gen_ui_valid: true,
    });
  });

  it('fails the stage with the reason when a reply under a schema holds no JSON', async () => {
    const stage = await configStage(
      { generative_ui: false, response_schema: REPLICAS },
      'Three replicas should do.',
      'As I said: three.',
    );
    expect(stage).toMatchObject({ state: 'FAILED', pack_data: null });
    expect(stage.error).toMatch(/no valid structured output after 2 attempts: the reply is not JSON/);
  });
});
