import { outboxDrained, storedCollection } from '@pack/testkit';
import {
  OrchestratorHarness,
  startOrchestrator,
  PROCESSORS,
  admin,
  consumer,
  otherOwner,
  owner,
  processorBody,
} from './harness';

describe('AI processors: create, list, read, update, delete', () => {
  let orchestrator: OrchestratorHarness;

  beforeAll(async () => {
    orchestrator = await startOrchestrator();
    await orchestrator.knowService({ service_id: 1 });
    await orchestrator.knowService({
      service_id: 2,
      owner: { id: otherOwner.id, name: otherOwner.username },
    });
    await orchestrator.knowModel({ llm_model_id: 1 });
    await orchestrator.knowModel({ llm_model_id: 2 });
  });
  afterAll(() => orchestrator.stop());

  it('lets the owner of the Service create, list, read, change and delete a processor', async () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      required: ['manifest'],
      properties: { manifest: { type: 'string' }, 'a.b': { enum: [[1, 2]] } },
    };
    const created = await orchestrator.create(
      processorBody({ response_schema: schema, generative_ui: true }),
    );
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    expect(created.body).toEqual({
      id,
      name: 'Config generator',
      service: 1,
      kind: 'config',
      llm_model: 1,
      prompt: 'Write the configuration.',
      response_schema: schema,
      response_schema_note: null,
      generative_ui: true,
      active: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });

    expect((await orchestrator.read(id)).body).toEqual(created.body);
    const listed = await orchestrator.as(owner, 'GET', `${PROCESSORS}?service=1&kind=config`);
    expect(listed.body.results.map((p: { id: number }) => p.id)).toContain(id);

    const changed = await orchestrator.patch(id, { name: 'Renamed', llm_model: 2, response_schema: null });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      name: 'Renamed',
      llm_model: 2,
      response_schema: null,
      kind: 'config',
    });
    expect((await orchestrator.read(id)).body.name).toBe('Renamed');

    expect((await orchestrator.remove(id)).status).toBe(204);
    expect((await orchestrator.read(id)).status).toBe(404);
    expect((await orchestrator.remove(id)).status).toBe(404);
    const after = await orchestrator.as(owner, 'GET', PROCESSORS);
    expect(after.body.results.map((p: { id: number }) => p.id)).not.toContain(id);
  });

  it('hides a processor from another owner (404) and from consumers (403); admins see every one', async () => {
    const mine = (await orchestrator.create(processorBody({ name: 'Mine' }))).body.id as number;
    const theirs = (await orchestrator.create(processorBody({ name: 'Theirs', service: 2 }), otherOwner)).body
      .id as number;

    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'Taken over' }],
      ['DELETE', undefined],
    ] as const) {
      const answer = await orchestrator.as(otherOwner, method, `${PROCESSORS}${mine}/`, body);
      expect(answer.status).toBe(404);
      expect(answer.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    expect((await orchestrator.read(mine)).body.name).toBe('Mine');

    const ownList = (await orchestrator.as(owner, 'GET', PROCESSORS)).body.results.map(
      (p: { id: number }) => p.id,
    );
    expect(ownList).toContain(mine);
    expect(ownList).not.toContain(theirs);
    const adminList = (await orchestrator.as(admin, 'GET', `${PROCESSORS}?limit=500`)).body.results.map(
      (p: { id: number }) => p.id,
    );
    expect(adminList).toEqual(expect.arrayContaining([mine, theirs]));
    expect((await orchestrator.read(theirs, admin)).status).toBe(200);

    expect((await orchestrator.read(mine, consumer)).status).toBe(403);
    expect((await orchestrator.create(processorBody(), consumer)).status).toBe(403);
    expect((await orchestrator.as(null, 'GET', PROCESSORS)).status).toBe(401);
  });

  it('keeps a processor hidden from its old owner once the Service changes hands', async () => {
    await orchestrator.knowService({ service_id: 3 });
    const id = (await orchestrator.create(processorBody({ service: 3 }))).body.id as number;
    await orchestrator.knowService({
      service_id: 3,
      owner: { id: otherOwner.id, name: otherOwner.username },
      version: 2,
    });
    expect((await orchestrator.read(id)).status).toBe(404);
    expect((await orchestrator.read(id, otherOwner)).status).toBe(200);
  });

  it('notes that a schema is unused on a pack optimizer and ignored on a universal executor', async () => {
    const schema = { type: 'object' };
    const optimizer = await orchestrator.create(
      processorBody({ kind: 'pack_optimizer', response_schema: schema }),
    );
    expect(optimizer.status).toBe(201);
    expect(optimizer.body.response_schema).toEqual(schema);
    expect(optimizer.body.response_schema_note).toMatch(/not used/);
    const executor = await orchestrator.create(
      processorBody({ kind: 'universal_executor', response_schema: schema }),
    );
    expect(executor.status).toBe(201);
    expect(executor.body.response_schema_note).toMatch(/ignored/);
  });

  describe('bad input: 400 naming the field, nothing stored', () => {
    const stored = async () => await storedCollection(orchestrator.service, 'ai_processors');

    const refused = async (body: unknown, field: string, principal = owner) => {
      await outboxDrained(orchestrator.service);
      const before = await stored();
      const answer = await orchestrator.create(body, principal);
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(Object.keys(answer.body.errors)).toEqual([field]);
      expect(await stored()).toEqual(before);
      return answer;
    };

    it("refuses an unknown Service, another owner's Service and a deleted one", async () => {
      const missing = await refused(processorBody({ service: 999 }), 'service');
      const theirs = await refused(processorBody({ service: 2 }), 'service');
      // "The same answer for another owner's Service and a missing one": no oracle.
      expect(missing.body.errors).toEqual({ service: ['no Service with id 999 that you own'] });
      expect(theirs.body.errors).toEqual({ service: ['no Service with id 2 that you own'] });
      expect({ ...theirs.body, errors: null }).toEqual({ ...missing.body, errors: null });
      await orchestrator.knowService({ service_id: 4 });
      await orchestrator.knowService({ service_id: 4, deleted: true, version: 2 });
      await refused(processorBody({ service: 4 }), 'service');
    });

    it('refuses an unknown or deleted LLM model, on create and on update', async () => {
      await refused(processorBody({ llm_model: 999 }), 'llm_model');
      await orchestrator.knowModel({ llm_model_id: 5 });
      await orchestrator.knowModel({ llm_model_id: 5, deleted: true, version: 2 });
      const answer = await refused(processorBody({ llm_model: 5 }), 'llm_model');
      expect(answer.body.errors.llm_model[0]).toMatch(/no LLM model with id 5/);

      const id = (await orchestrator.create(processorBody())).body.id as number;
      const patched = await orchestrator.patch(id, { llm_model: 5 });
      expect(patched.status).toBe(400);
      expect(Object.keys(patched.body.errors)).toEqual(['llm_model']);
      expect((await orchestrator.read(id)).body.llm_model).toBe(1);
    });

    it('refuses a response schema on a change instance validator, on create and on update', async () => {
      await refused(
        processorBody({ kind: 'change_instance_validator', response_schema: { type: 'object' } }),
        'response_schema',
      );
      const validator = await orchestrator.create(processorBody({ kind: 'change_instance_validator' }));
      expect(validator.status).toBe(201);
      const patched = await orchestrator.patch(validator.body.id, { response_schema: { type: 'object' } });
      expect(patched.status).toBe(400);
      expect(Object.keys(patched.body.errors)).toEqual(['response_schema']);

      const config = await orchestrator.create(processorBody({ response_schema: { type: 'object' } }));
      const toValidator = await orchestrator.patch(config.body.id, { kind: 'change_instance_validator' });
      expect(toValidator.status).toBe(400);
      expect(Object.keys(toValidator.body.errors)).toEqual(['response_schema']);
      expect((await orchestrator.read(config.body.id)).body.kind).toBe('config');
    });

    it('refuses a response schema that is not a draft-07 JSON Schema', async () => {
      await refused(processorBody({ response_schema: { type: 'no-such-type' } }), 'response_schema');
      await refused(
        processorBody({ response_schema: { $schema: 'https://json-schema.org/draft/2020-12/schema' } }),
        'response_schema',
      );
      await refused(processorBody({ response_schema: [1] }), 'response_schema');
    });

    it('refuses unknown fields, a bad kind, a missing name and a change of Service', async () => {
      await refused(processorBody({ colour: 'red' }), 'colour');
      await refused(processorBody({ kind: 'deploy' }), 'kind');
      const { name: _name, ...nameless } = processorBody();
      await refused(nameless, 'name');
      const id = (await orchestrator.create(processorBody())).body.id as number;
      const moved = await orchestrator.patch(id, { service: 2 });
      expect(moved.status).toBe(400);
    });
  });
});
