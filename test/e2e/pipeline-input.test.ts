import { gzipSync } from 'node:zlib';
import { type CallOptions, type CallResult, storedCollection, waitFor } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import {
  expectRefused,
  modelKnownToOrchestrator,
  modelOnFakeProvider,
  startStack,
  type Stack,
} from '../stack';

const PACK = '/v1/external/serviceowner/pack/';
const PROCESSORS = '/v1/ai/processors/';

/**
 * Hostile input to the pipeline orchestrator's routes through the gateway, beyond what the route
 * matrix sends every route: text the database cannot hold, limits counted in bytes, ids and stages
 * in other spellings, bodies in other encodings, and another owner's pipelines. A refused request
 * answers 400 naming the field (404 for a stage or a resource that is not the caller's) and
 * stores nothing.
 */
describe('pipeline orchestrator input through the gateway', () => {
  let stack: Stack;
  let ownerToken: string;
  let otherToken: string;
  let consumerToken: string;
  let service: number;
  let model: number;
  let item: number;
  let processor: number;
  let pipeline: number;

  const orchestrator = () => stack.service('pipeline-orchestrator');
  const asOwner = (method: string, path: string, options: Omit<CallOptions, 'token' | 'principal'> = {}) =>
    stack.call(method, path, { token: ownerToken, ...options });

  /** Runs `request` and expects it refused with `status`, naming exactly `fields`, nothing stored. */
  const refused = (request: () => Promise<CallResult>, status: number, fields?: string[]) =>
    expectRefused(orchestrator(), request, status, fields);

  beforeAll(async () => {
    stack = await startStack();
    [ownerToken, otherToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    // Nothing below sends a generate request: the provider's address is never called.
    model = await modelOnFakeProvider(stack, 'Input model', 'https://llm.example.com', 'input-key-0000');
    await modelKnownToOrchestrator(stack, model);
    // No processor yet: the approval starts no run, and nothing below sends a generate request.
    const actors = pipelineActors(stack, ownerToken, consumerToken);
    service = await actors.serviceWith('Input service', model, []);
    item = (await actors.approved(service, { size: 'S' })).item;
    await waitFor(
      async () => (await storedCollection(orchestrator(), 'service_items')).some(({ _id }) => _id === item),
      { what: `the orchestrator to learn Service Item ${item}` },
    );
    const config = await waitFor(
      async () => {
        const answer = await asOwner('POST', PROCESSORS, {
          body: { name: 'Input config', service, kind: 'config', llm_model: model, active: true },
        });
        return answer.status === 201 && answer;
      },
      { what: 'the orchestrator to learn the Service' },
    );
    processor = config.body.id;
    // The processor may have been created from the catalog's answer (read-your-writes, stored at
    // version 0); the catalog's own event replaces it later. Wait for it, so that no refused
    // request below sees the projection change under it.
    await waitFor(
      async () =>
        (await storedCollection(orchestrator(), 'services')).some(
          ({ _id, version }) => _id === service && (version as number) > 0,
        ),
      { what: `the catalog's event of Service ${service} in the orchestrator's projection` },
    );
    // PackData pushed into VERIFY makes a run; no execution processor, so nothing starts.
    const pushed = await asOwner('POST', `${PACK}data/service_item/${item}/verify/`, { body: { ok: true } });
    expect(pushed.status).toBe(201);
    pipeline = pushed.body.pipeline.id;
    // A new run is watched until a sweep finds nothing pending in it; wait for that sweep, so that
    // no refused request below sees the pipeline change under it.
    await waitFor(
      async () =>
        (await storedCollection(orchestrator(), 'pipelines')).some(
          ({ _id, watched }) => _id === pipeline && watched === false,
        ),
      { what: `the sweeper to let pipeline ${pipeline} go` },
    );
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('refuses a NUL character or a lone surrogate in a processor name or prompt and in retrigger feedback, naming the field', async () => {
    const body = { name: 'Config', service, kind: 'config', llm_model: model };
    for (const text of ['before\u0000after', 'before\ud800after']) {
      for (const field of ['name', 'prompt']) {
        const bad = { [field]: text };
        await refused(() => asOwner('POST', PROCESSORS, { body: { ...body, ...bad } }), 400, [field]);
        await refused(() => asOwner('PATCH', `${PROCESSORS}${processor}/`, { body: bad }), 400, [field]);
      }
      await refused(
        () => asOwner('POST', `${PACK}retrigger/service_item/${item}/`, { body: { feedback: text } }),
        400,
        ['feedback'],
      );
    }
  });

  it('refuses processor fields of the wrong type or size, naming each', async () => {
    const body = { name: 'Config', service, kind: 'config', llm_model: model };
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: ' \t ' }, 'name'],
      [{ prompt: 'x'.repeat(100_001) }, 'prompt'],
      [{ service: String(service) }, 'service'],
      [{ service: 2 ** 53 }, 'service'],
      [{ llm_model: 1.5 }, 'llm_model'],
      [{ kind: 'CONFIG' }, 'kind'],
      [{ active: 'true' }, 'active'],
      [{ generative_ui: 1 }, 'generative_ui'],
      [{ response_schema: '{"type":"object"}' }, 'response_schema'],
      [{ response_schema: { type: 'string', pattern: '(' } }, 'response_schema'],
      [{ response_schema: { $ref: 'http://127.0.0.1:1/schema.json' } }, 'response_schema'],
    ];
    for (const [change, field] of cases)
      await refused(() => asOwner('POST', PROCESSORS, { body: { ...body, ...change } }), 400, [field]);
  });

  it('counts the response schema limit in bytes of JSON, not in characters', async () => {
    // 40,000 two-byte characters: 80,000 bytes of JSON, over the 64 KiB limit.
    const schema = { type: 'object', description: 'é'.repeat(40_000) };
    await refused(
      () => asOwner('PATCH', `${PROCESSORS}${processor}/`, { body: { response_schema: schema } }),
      400,
      ['response_schema'],
    );
  });

  it('refuses ids in other spellings with 400 naming path.id, on every route', async () => {
    const paths = (id: string) => [
      ['POST', `${PACK}trigger/service_item/${id}/config/`],
      ['POST', `${PACK}retrigger/service_item/${id}/`],
      ['POST', `${PACK}data/service_item/${id}/verify/`],
      ['GET', `${PACK}pipelines/latest/service_item/${id}/`],
      ['GET', `${PACK}pipelines/${id}/`],
      ['GET', `${PROCESSORS}${id}/`],
      ['PATCH', `${PROCESSORS}${id}/`],
      ['DELETE', `${PROCESSORS}${id}/`],
    ];
    // NUL, fullwidth 5, Arabic-Indic 3, past 2^64, malformed percent-encoding.
    for (const id of ['%00', '%EF%BC%95', '%D9%A3', '99999999999999999999', '%ZZ']) {
      for (const [method, path] of paths(id)) {
        const body = method === 'POST' || method === 'PATCH' ? { body: { name: 'x' } } : {};
        await refused(() => asOwner(method!, path!, body), 400, ['path.id']);
      }
    }
  });

  it('answers 404 to a stage in another case or spelling, 400 naming path.stage to one that does not decode', async () => {
    for (const stage of ['VERIFY', 'Verify', '%00', 'verify%2F', 'verify%20']) {
      await refused(() => asOwner('POST', `${PACK}trigger/service_item/${item}/${stage}/`), 404);
      await refused(
        () => asOwner('POST', `${PACK}data/service_item/${item}/${stage}/`, { body: { a: 1 } }),
        404,
      );
    }
    await refused(() => asOwner('POST', `${PACK}trigger/service_item/${item}/%ZZ/`), 400, ['path.stage']);
  });

  it('refuses PackData that does not decode, is not JSON or is over the limit, and keeps any JSON object as sent, numbers beyond the double range too', async () => {
    const path = `${PACK}data/service_item/${item}/verify/`;
    for (const encoding of ['gzip', 'deflate', 'br']) {
      await refused(
        () => asOwner('POST', path, { raw: '{"a":1}', headers: { 'content-encoding': encoding } }),
        400,
        ['(body)'],
      );
    }
    await refused(
      () => asOwner('POST', path, { raw: '{"a":1}', headers: { 'content-type': 'text/plain' } }),
      415,
    );
    await refused(() => asOwner('POST', path, { raw: JSON.stringify({ a: 'x'.repeat(1_100_000) }) }), 413);
    // A number beyond the double range is valid JSON: kept as sent, not refused (docs/decisions/0039).
    const huge = await asOwner('POST', path, { raw: '{"vm":{"disks":[10,1e400]}}' });
    expect(huge.status).toBe(201);
    expect(huge.text).toContain('"pack_data":{"vm":{"disks":[10,1e400]}}');

    const data = { $set: { role: 'admin' }, 'a.b': { $gt: '' }, nested: { $where: '1', 'x.y': [1] } };
    const zipped = await asOwner('POST', path, {
      raw: gzipSync(JSON.stringify(data)),
      headers: { 'content-encoding': 'gzip' },
    });
    expect(zipped.status).toBe(201);
    expect(zipped.body.pipeline.stages[1]).toMatchObject({
      stage: 'VERIFY',
      origin: 'pushed',
      pack_data: data,
    });
  });

  it("hides another owner's pipelines (404) and refuses consumers (403)", async () => {
    for (const path of [`${PACK}pipelines/${pipeline}/`, `${PACK}pipelines/latest/service_item/${item}/`]) {
      expect((await asOwner('GET', path)).status).toBe(200);
      await refused(() => stack.call('GET', path, { token: otherToken }), 404);
      await refused(() => stack.call('GET', path, { token: consumerToken }), 403);
    }
  });
});
