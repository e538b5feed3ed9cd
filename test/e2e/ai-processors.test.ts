import { seededSecret, waitFor } from '@pack/testkit';
import { modelKnownToOrchestrator, startStack, type Stack } from '../stack';

const PROCESSORS = '/v1/ai/processors/';
const MODELS = '/v1/ai/llm_models/';

describe('AI processors through the gateway', () => {
  let stack: Stack;
  let ownerToken: string;
  let otherOwnerToken: string;

  beforeAll(async () => {
    stack = await startStack();
    ownerToken = await stack.issueToken('service_owner');
    otherOwnerToken = await stack.issueToken('service_owner');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('learns Services from the catalog, scopes processors to their owner and holds a used model in the llm-gateway', async () => {
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: ownerToken,
      body: { name: 'Managed database' },
    });
    expect(service.status).toBe(201);
    const model = await stack.call('POST', MODELS, {
      body: {
        name: 'Processor model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        extra_data: {
          api_key: seededSecret('the api_key', { prefix: 'sk-e2e-key-', suffix: '0000' }),
          base_url: 'https://api.example.com/v1',
        },
      },
    });
    expect(model.status).toBe(201);
    await modelKnownToOrchestrator(stack, model.body.id);

    const body = {
      name: 'Database config',
      service: service.body.id,
      kind: 'config',
      llm_model: model.body.id,
      prompt: 'Produce the database configuration.',
      response_schema: { type: 'object', required: ['engine'], properties: { engine: { type: 'string' } } },
      active: true,
    };
    // The catalog's Service event reaches the orchestrator asynchronously: 400 naming `service` until then.
    const created = await waitFor(
      async () => {
        const answer = await stack.call('POST', PROCESSORS, { token: ownerToken, body });
        if (answer.status === 400) expect(Object.keys(answer.body.errors)).not.toContain('llm_model');
        return answer.status === 201 && answer;
      },
      { what: 'the orchestrator to learn the Service' },
    );
    const path = `${PROCESSORS}${created.body.id}/`;
    expect(created.body).toMatchObject({ ...body, response_schema_note: null });

    expect((await stack.call('GET', path, { token: ownerToken })).status).toBe(200);
    expect((await stack.call('GET', path, { token: otherOwnerToken })).status).toBe(404);
    const second = await stack.call('POST', PROCESSORS, {
      token: ownerToken,
      body: { ...body, name: 'Second config' },
    });
    expect(second.status).toBe(409);

    const modelPath = `${MODELS}${model.body.id}/`;
    await waitFor(async () => (await stack.call('DELETE', modelPath)).status === 409, {
      what: 'the llm-gateway to see the active processor',
    });
    expect((await stack.call('DELETE', path, { token: ownerToken })).status).toBe(204);
    await waitFor(async () => (await stack.call('DELETE', modelPath)).status === 204, {
      what: 'the llm-gateway to see the processor deleted',
    });
  });
});
