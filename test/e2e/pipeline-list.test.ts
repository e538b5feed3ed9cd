/**
 * The list of latest pipelines through the gateway (item 8): each Service Item's latest
 * run once, its three stage states, its status filter, processor and model names, owner-scoped.
 */
import { startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import {
  expectRefused,
  modelKnownToOrchestrator,
  modelOnFakeProvider,
  startStack,
  type Stack,
} from '../stack';

const KEY = 'sk-e2e-pipeline-list-0000';
const PACK = '/v1/external/serviceowner/pack/';
const LIST = `${PACK}pipelines/`;

interface Row {
  service_item: number;
  run: number;
  status: string;
  service: { id: number; name: string | null };
  total_cost: string | null;
  stages: { stage: string; state: string | null; processor_name: string | null; model_name: string | null }[];
}

describe('the latest pipeline of each Service Item, listed through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let ownerToken: string;
  let otherToken: string;
  let consumerToken: string;
  let otherConsumerToken: string;
  let actors: ReturnType<typeof pipelineActors>;
  let service: number;
  let done: number;
  let failed: number;

  const list = async (query = '', token = ownerToken) => {
    const answer = await stack.call('GET', `${LIST}${query}`, { token });
    expect(answer.status).toBe(200);
    return answer.body as { count: number; next: string | null; results: Row[] };
  };
  const stateOf = async (item: number, stage: number) =>
    (await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`)).body?.stages?.[stage]
      ?.state as string | undefined;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    [ownerToken, otherToken, consumerToken, otherConsumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
      stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(stack, ownerToken, consumerToken);
    const model = await modelOnFakeProvider(stack, 'List model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, model);
    service = await actors.serviceWith('Listed', model, ['config', 'verify', 'execution']);

    fake.scriptReplies('{"vm":"c2"}', '{"checked":true}', '{"delivered":true}');
    done = (await actors.approved(service, { n: 1 })).item;
    await waitFor(async () => (await stateOf(done, 2)) === 'OK', { what: 'EXECUTION OK' });
    // A second run of the same item: only it is listed.
    fake.scriptReplies('{"vm":"c3"}', '{"checked":true}', '{"delivered":true}');
    expect((await actors.asOwner('POST', `${PACK}trigger/service_item/${done}/config/`)).status).toBe(202);
    await waitFor(
      async () => {
        const latest = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${done}/`);
        return latest.body.run === 2 && latest.body.stages[2].state === 'OK';
      },
      { what: 'run 2 EXECUTION OK' },
    );

    fake.scriptReplies('{"vm":"c4"}');
    // CONFIG answers normally, VERIFY is refused by the provider.
    fake.next({}).next({ fault: { kind: 'status', status: 400, message: 'verify refused' } });
    // Another consumer's declaration: another Service Item of the Service.
    failed = (await pipelineActors(stack, ownerToken, otherConsumerToken).approved(service, { n: 2 })).item;
    await waitFor(async () => (await stateOf(failed, 1)) === 'FAILED', {
      what: 'VERIFY FAILED',
    });
  });
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
  });

  it('lists each item once, its latest run with its three stage states, processor and model names', async () => {
    const page = await list();
    expect(page.count).toBe(2);
    // Newest pipeline first: the failed item's run started after the done item's second run.
    expect(page.results.map((row) => [row.service_item, row.run, row.status])).toEqual([
      [failed, 1, 'failed'],
      [done, 2, 'done'],
    ]);
    expect(page.results[0]).toMatchObject({
      service: { id: service, name: 'Listed' },
      total_cost: '0.000006',
      stages: [
        { stage: 'CONFIG', state: 'OK', processor_name: 'Listed config', model_name: 'gpt-4o-mini' },
        { stage: 'VERIFY', state: 'FAILED', processor_name: 'Listed verify', model_name: 'gpt-4o-mini' },
        { stage: 'EXECUTION', state: null, processor_name: null, model_name: null },
      ],
    });
    const latest = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${failed}/`);
    expect(latest.body.stages[1]).toMatchObject({
      processor_name: 'Listed verify',
      model_name: 'gpt-4o-mini',
    });
  });

  it('filters by status: failed, done, running, waiting', async () => {
    expect((await list('?status=failed')).results.map((row) => row.service_item)).toEqual([failed]);
    expect((await list('?status=done')).results.map((row) => row.service_item)).toEqual([done]);
    expect(await list('?status=running')).toMatchObject({ count: 0, results: [] });
    expect(await list('?status=waiting&limit=1')).toMatchObject({ count: 0, results: [] });
    const paged = await list('?limit=1&offset=1');
    expect(paged).toMatchObject({ count: 2, results: [{ service_item: done }] });
    const first = await list('?limit=1');
    expect(first.next).toMatch(/[?&]after=\d+(&|$)/);
    expect(await list(`?${first.next!.split('?')[1]}`)).toMatchObject({
      count: 2,
      next: null,
      results: [{ service_item: done }],
    });
  });

  it("shows an owner only their Services' items, and an admin every item", async () => {
    expect(await list('', otherToken)).toMatchObject({ count: 0, results: [] });
    const all = await list('?status=failed', stack.adminToken);
    expect(all.results.map((row) => row.service_item)).toContain(failed);
  });

  it('refuses a bad filter with a 400 naming it, no token with 401, a consumer with 403', async () => {
    const orchestrator = stack.service('pipeline-orchestrator');
    for (const query of ['?status=FAILED', '?status=broken', '?limit=0'])
      await expectRefused(
        orchestrator,
        () => stack.call('GET', `${LIST}${query}`, { token: ownerToken }),
        400,
        [query.startsWith('?status') ? 'query.status' : 'query.limit'],
      );
    expect((await stack.call('GET', LIST, { token: null })).status).toBe(401);
    expect((await stack.call('GET', LIST, { token: consumerToken })).status).toBe(403);
  });

  it('lists as done a run that ended OK before EXECUTION: a Service with only a config processor, its Change Instance COMPLETED', async () => {
    const [owner, consumer] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    const mine = pipelineActors(stack, owner, consumer);
    const model = await modelOnFakeProvider(stack, 'Config-only model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, model);
    const configOnly = await mine.serviceWith('Config only', model, ['config']);
    fake.scriptReplies('{"vm":"c5"}');
    const { instance, item } = await mine.approved(configOnly, { n: 5 });
    await waitFor(
      async () =>
        (await stack.call('GET', `/v1/catalog/change_instances/${instance}/`, { token: owner })).body
          ?.state === 'COMPLETED',
      { what: 'the Change Instance COMPLETED' },
    );
    const rows = await list('', owner);
    expect(rows.results.map((row) => [row.service_item, row.status])).toEqual([[item, 'done']]);
    expect(rows.results[0]!.stages.map((stage) => stage.state)).toEqual(['OK', null, null]);
    expect((await list('?status=done', owner)).results.map((row) => row.service_item)).toEqual([item]);
    expect(await list('?status=waiting', owner)).toMatchObject({ count: 0, results: [] });
  });
});
