/**
 * AI budgets (docs/decisions/0046): a Service's AI budget through the gateway. Owners
 * read it with the month's spend, administrators set it; at the limit no new AI work of the
 * Service starts (a trigger or retrigger answers 409 naming the budget, an automatic start is
 * recorded FAILED with `budget_exhausted` and the Change Instance says why), across two replicas
 * of the orchestrator and of the llm-gateway; raising the limit lets work start again. The tests
 * run in order and share the stack.
 */
import { loadConfig } from '@pack/config';
import { llmGatewayEnvSchema, llmGatewayService } from '@pack/llm-gateway';
import { orchestratorEnvSchema, orchestratorService } from '@pack/pipeline-orchestrator';
import { startService, type RunningService } from '@pack/runtime';
import { type FakeProviderServer, startFakeOpenAi, storedCollection, waitFor } from '@pack/testkit';
import { approvedItems, latestStages, pipelineActors } from '../pipeline-actors';
import {
  expectRefused,
  modelKnownToOrchestrator,
  modelOnFakeProvider,
  pipelineMessagesHandled,
  startStack,
  type Stack,
} from '../stack';

const KEY = 'sk-e2e-budgets-0000';
const PACK = '/v1/external/serviceowner/pack/';
/** What one call of the fake provider costs on the model below (its default usage, prices 1 and 2), in 1e-6. */
const CALL_MICROS = 26;
const budgetPath = (service: number) => `/v1/ai/services/${service}/budget/`;
const EXHAUSTED = /^budget_exhausted: the Service's AI budget of 0\.0001 \w+ for \d{4}-\d\d is spent/;

describe('AI budgets per Service, through the gateway', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let replicas: RunningService<never>[] = [];
  let ownerToken: string;
  let otherOwnerToken: string;
  let consumerToken: string;
  let model: number;
  const consumers: string[] = [];

  beforeAll(async () => {
    [stack, fake] = await Promise.all([startStack(), startFakeOpenAi({ apiKey: KEY })]);
    // A second orchestrator and a second llm-gateway: approvals, requests and results go to either.
    const orchestrator = await startService(
      orchestratorService,
      loadConfig(orchestratorEnvSchema, stack.envs['pipeline-orchestrator']),
    );
    const gateway = await startService(
      llmGatewayService,
      loadConfig(llmGatewayEnvSchema, stack.envs['llm-gateway']),
    );
    await Promise.all([orchestrator.started, gateway.started]);
    replicas = [orchestrator, gateway] as unknown as RunningService<never>[];
    [ownerToken, otherOwnerToken, consumerToken] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    // Priced 1 and 2 per million tokens; 10 s before giving up, so a loaded machine times nothing out.
    model = await modelOnFakeProvider(stack, 'Budget model', fake.url, KEY, {
      timeout: 10,
      input_price_per_1m_tokens: '1',
      output_price_per_1m_tokens: '2',
    });
    await modelKnownToOrchestrator(stack, model);
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await fake?.close();
    await stack?.stop();
  });

  const actors = () => pipelineActors(stack, ownerToken, consumerToken);
  const asOwner = (method: string, path: string, body?: unknown) => actors().asOwner(method, path, body);
  const calls = () => fake.requestsTo('/chat/completions').length;
  const micros = (n: number) => `0.${String(n).padStart(6, '0')}`;
  const currency = async () =>
    (await stack.call('GET', '/v1/core/general_settings/')).body.currency.currency as string;

  it('"owners read it with the month\'s spend so far", set by an administrator only; bad amounts are refused with 400 naming monthly_limit; 401/403/404', async () => {
    // Read at once after the catalog created it: the orchestrator asks the catalog (0032).
    const created = await asOwner('POST', '/v1/catalog/services/', { name: 'Budget reads' });
    expect(created.status).toBe(201);
    const service = created.body.id as number;
    const fresh = await asOwner('GET', budgetPath(service));
    expect(fresh.status).toBe(200);
    expect(fresh.body).toEqual({
      service_id: service,
      monthly_limit: null,
      spent_this_month: '0.000000',
      unpriced_calls_this_month: 0,
      month: new Date().toISOString().slice(0, 7),
      currency: await currency(),
      exhausted: false,
    });

    const orchestrator = stack.service('pipeline-orchestrator');
    for (const bad of ['-1', '1.1234567', 'ten', '1e3', '', '1000000.01', '99999999999999999999', 12, true])
      await expectRefused(
        orchestrator,
        () => stack.call('PUT', budgetPath(service), { body: { monthly_limit: bad } }),
        400,
        ['monthly_limit'],
      );
    await expectRefused(orchestrator, () => stack.call('PUT', budgetPath(service), { body: {} }), 400, [
      'monthly_limit',
    ]);
    // Only administrators set it; consumers and other owners do not read it; nobody without a token.
    await expectRefused(orchestrator, () => asOwner('PUT', budgetPath(service), { monthly_limit: '1' }), 403);
    expect((await stack.call('GET', budgetPath(service), { token: consumerToken })).status).toBe(403);
    expect((await stack.call('GET', budgetPath(service), { token: otherOwnerToken })).status).toBe(403);
    expect((await stack.call('GET', budgetPath(service), { token: null })).status).toBe(401);
    expect((await stack.call('GET', budgetPath(987_654_321))).status).toBe(404);
    expect((await stack.call('PUT', budgetPath(987_654_321), { body: { monthly_limit: '1' } })).status).toBe(
      404,
    );

    const set = await stack.call('PUT', budgetPath(service), { body: { monthly_limit: '25.00' } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      monthly_limit: '25.00',
      spent_this_month: '0.000000',
      exhausted: false,
    });
    expect((await asOwner('GET', budgetPath(service))).body.monthly_limit).toBe('25.00');
    const removed = await stack.call('PUT', budgetPath(service), { body: { monthly_limit: null } });
    expect(removed.body.monthly_limit).toBeNull();
  });

  it('"At the limit no new AI work starts for that Service": parallel stages across two orchestrators and two llm-gateways stop at the limit, every call counted once; triggers and retriggers answer 409 naming the budget; raising the limit resumes', async () => {
    const service = await actors().serviceWith('Budgeted', model, ['config', 'verify']);
    // 0.0001 is 3.85 calls: the limit is crossed by the CONFIG calls, in flight together.
    expect((await stack.call('PUT', budgetPath(service), { body: { monthly_limit: '0.0001' } })).status).toBe(
      200,
    );
    const before = calls();
    fake.always({ latencyMs: 400 });
    const items = await approvedItems(stack, consumers, service, 6, { together: true });
    /** Nothing of the item runs: CONFIG failed, or CONFIG OK and VERIFY ended. */
    const ended = async (item: number) => {
      const [config, verify] = await latestStages(stack, item);
      return (
        config?.state === 'FAILED' || (config?.state === 'OK' && ['OK', 'FAILED'].includes(verify!.state!))
      );
    };
    await waitFor(async () => (await Promise.all(items.map(ended))).every(Boolean), {
      what: 'every pipeline ended',
    });
    fake.always({});
    const made = calls() - before;
    // A call starts only while the spend counted is under the limit (at most 3 calls' worth): past
    // it, only the calls already in flight (one per item at a time) are billed. Of the 12 calls
    // the items would make without a budget, some were not made.
    expect(made).toBeGreaterThanOrEqual(4);
    expect(made).toBeLessThanOrEqual(3 + items.length);
    let notMade = 0;
    for (const item of items) {
      const [config, verify] = await latestStages(stack, item);
      // A refused CONFIG is two calls not made, a refused VERIFY one.
      for (const [stage, skipped] of [
        [config!, 2],
        [verify!, 1],
      ] as const)
        if (stage.state === 'FAILED') {
          expect(stage.error).toMatch(EXHAUSTED);
          notMade += skipped;
        }
    }
    expect(made + notMade).toBe(2 * items.length);
    expect(notMade).toBeGreaterThan(0);
    // Every call billed once, whichever replica counted it.
    const budget = await asOwner('GET', budgetPath(service));
    expect(budget.body).toMatchObject({
      monthly_limit: '0.0001',
      spent_this_month: micros(made * CALL_MICROS),
      exhausted: true,
    });
    const handled = await Promise.all(
      [stack.service('pipeline-orchestrator'), replicas[0]!].map((r) =>
        pipelineMessagesHandled(r.metricsUrl),
      ),
    );
    expect(handled.every((count) => count > 0)).toBe(true);

    // An approval now: CONFIG recorded FAILED with the reason, and the Change Instance says why.
    const quiet = calls();
    const { instance, item } = await actors().approved(service, { after: 'the limit' });
    const failedRun = await waitFor(
      async () => {
        const stages = await latestStages(stack, item);
        return stages[0]?.state === 'FAILED' && stages;
      },
      { what: 'the approval recorded FAILED' },
    );
    expect(failedRun[0]).toMatchObject({ error: expect.stringMatching(EXHAUSTED) });
    const told = await waitFor(
      async () => {
        const got = await asOwner('GET', `/v1/catalog/change_instances/${instance}/`);
        return got.body.state === 'FAILED' && got.body;
      },
      { what: 'the Change Instance FAILED' },
    );
    expect(told.reasons).toEqual([expect.stringMatching(/^CONFIG: budget_exhausted: /)]);

    // Triggers and retriggers: 409 naming the budget, nothing stored (the feedback neither).
    const orchestrator = stack.service('pipeline-orchestrator');
    // Once the sweeper has let go of every ended run (its `watched` flag), only a request changes the database.
    await waitFor(
      async () => (await storedCollection(orchestrator, 'pipelines')).every((run) => run.watched === false),
      { what: 'the sweeper done with the ended runs' },
    );
    const trigger = await expectRefused(
      orchestrator,
      () => asOwner('POST', `${PACK}trigger/service_item/${items[0]}/config/`),
      409,
      ['monthly_limit'],
    );
    expect(trigger.body.detail).toMatch(/budget_exhausted: the Service's AI budget/);
    await expectRefused(
      orchestrator,
      () => asOwner('POST', `${PACK}retrigger/service_item/${items[1]}/`, { feedback: 'again' }),
      409,
      ['monthly_limit'],
    );
    // Rule 2: PackData pushed into CONFIG is stored; VERIFY is recorded FAILED with the reason.
    const pushed = await asOwner('POST', `${PACK}data/service_item/${items[2]}/config/`, { vm: 'pushed' });
    expect(pushed.status).toBe(201);
    expect(pushed.body.pipeline.stages.slice(0, 2)).toMatchObject([
      { state: 'OK', origin: 'pushed' },
      { state: 'FAILED', error: expect.stringMatching(EXHAUSTED) },
    ]);
    expect(calls()).toBe(quiet);

    // Item 6: every orchestrator replica reports the used ratio from the stored spend.
    for (const orchestrator of [stack.service('pipeline-orchestrator'), replicas[0]!]) {
      const text = await (await fetch(`${orchestrator.metricsUrl}/metrics`)).text();
      const ratio = new RegExp(
        `^pack_service_ai_budget_used_ratio\\{[^}]*service_id="${service}"[^}]*\\} (\\S+)$`,
        'm',
      );
      expect(Number(ratio.exec(text)?.[1])).toBeCloseTo((made * CALL_MICROS) / 100, 5);
    }

    // Raised: work starts again at once, on both replicas (no restart; a set limit is never cached).
    expect((await stack.call('PUT', budgetPath(service), { body: { monthly_limit: '1' } })).status).toBe(200);
    const resumed = await Promise.all(
      items.slice(0, 4).map((each) => asOwner('POST', `${PACK}retrigger/service_item/${each}/`)),
    );
    expect(resumed.map((answer) => answer.status)).toEqual([202, 202, 202, 202]);
    for (const each of items.slice(0, 4))
      await waitFor(async () => (await latestStages(stack, each))[1]?.state === 'OK', {
        what: `item ${each} through VERIFY`,
      });
    const after = await asOwner('GET', budgetPath(service));
    expect(after.body).toMatchObject({
      spent_this_month: micros((calls() - before) * CALL_MICROS),
      exhausted: false,
    });
  });
});
