import {
  CEILINGS,
  call,
  Receiver,
  startFakeOpenAi,
  startPrivateDatabasePair,
  waitFor,
  type CallResult,
  type FakeProviderServer,
  type PrivateDatabasePair,
} from '@pack/testkit';
import { callKey, latestStages, pipelineActors, type StageView } from '../pipeline-actors';
import { modelOnFakeProvider, startStack, type Stack } from '../stack';

// Tests that drive volume: the long ceiling for every test of the file.
jest.setTimeout(CEILINGS.longTest);

const KEY = 'sk-e2e-dbrestart-0000';
const KINDS = ['config', 'verify', 'execution'];
/** Consumers submitting before the outage, and during it (each once, again 0.5 s after a refusal). */
const BEFORE = 6;
const DURING = 6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The MongoDB-wire server restarting under load. Every service of the stack
 * runs on a PostgreSQL + FerretDB pair of the test's own (scripts/infra.sh db-up in a private
 * folder; the suite's shared servers are left alone), with the shared RabbitMQ. While pipelines
 * run and webhooks fire, FerretDB is killed with -9, then PostgreSQL is stopped and both are
 * started again. The services themselves are never restarted.
 */
describe('the database restarting under load (FerretDB kill -9, then PostgreSQL restarted)', () => {
  let pair: PrivateDatabasePair;
  let stack: Stack;
  let fake: FakeProviderServer;
  let receiver: Receiver;

  beforeAll(async () => {
    pair = await startPrivateDatabasePair();
    const onPair = { MONGO_URL: pair.url };
    [stack, fake, receiver] = await Promise.all([
      startStack({
        env: {
          gateway: onPair,
          settings: onPair,
          catalog: onPair,
          'llm-gateway': onPair,
          'pipeline-orchestrator': onPair,
          'webhook-dispatcher': onPair,
        },
      }),
      startFakeOpenAi({ apiKey: KEY }),
      new Receiver().start(),
    ]);
  });
  afterAll(async () => {
    await receiver?.stop();
    await fake?.close();
    await stack?.stop();
    await pair?.stop();
  });

  it('writes are answered 503 with Retry-After (never 500) meanwhile; every service goes not-ready and back by itself; every pipeline ends OK and every webhook arrives exactly once', async () => {
    fake.always({ latencyMs: 300 });
    const owner = await stack.issueToken('service_owner');
    const { asOwner } = pipelineActors(stack, owner, '');
    const model = await modelOnFakeProvider(stack, 'Database restart model', fake.url, KEY);
    const service = (
      await asOwner('POST', '/v1/catalog/services/', { name: 'DB restart', auto_approval: true })
    ).body.id as number;
    for (const kind of KINDS) {
      const body = { name: kind, service, kind, llm_model: model, prompt: `Do ${kind}.`, active: true };
      await waitFor(async () => (await asOwner('POST', '/v1/ai/processors/', body)).status === 201, {
        what: `the ${kind} processor`,
      });
    }
    const hook = {
      name: 'On approval',
      service,
      target_url: receiver.url,
      change_instance_state: 'APPROVED',
    };
    expect((await asOwner('POST', '/v1/external/serviceowner/webhooks/', hook)).status).toBe(201);
    const consumers: string[] = [];
    for (let i = 0; i < BEFORE + DURING; i++) consumers.push(await stack.issueToken('consumer'));

    // Submissions: plain calls (a 503 is what this test expects to see), kept with their answers.
    const refusals: CallResult[] = [];
    const submit = async (i: number): Promise<number> => {
      for (;;) {
        const answer = await call(stack.gateway, 'POST', `/v1/catalog/services/${service}/declarations/`, {
          token: consumers[i],
          body: { declaration: { n: i } },
        });
        if (answer.status === 201) return answer.body.change_instance.service_item as number;
        refusals.push(answer);
        await sleep(500);
      }
    };
    // Readiness of every service, sampled every 250 ms from the kill until all are ready again.
    const notReady = new Map<string, number>();
    const readiness = async (until: () => boolean) => {
      for (;;) {
        const states = await Promise.all(
          stack.services.map(async (running) => {
            const status = (await fetch(`${running.metricsUrl}/readyz`).catch(() => null))?.status;
            if (status !== 200)
              notReady.set(running.definition.name, (notReady.get(running.definition.name) ?? 0) + 1);
            return status === 200;
          }),
        );
        if (until() && states.every(Boolean)) return;
        await sleep(250);
      }
    };

    const first = Promise.all(Array.from({ length: BEFORE }, (_, i) => submit(i)));
    // Some pipelines under way (provider calls made) before the database goes away.
    await waitFor(() => fake.requestsTo('/chat/completions').length >= 3, { what: 'pipelines under way' });
    const killedAt = Date.now();
    await pair.killFerret();
    const during = Promise.all(
      Array.from({ length: DURING }, (_, i) => sleep(i * 300).then(() => submit(BEFORE + i))),
    );
    let back = false;
    const watched = readiness(() => back);
    // FerretDB away for 6 s (longer than the driver's 5 s server selection), started again; then
    // PostgreSQL stopped for 6 s under a running FerretDB, and started again.
    await sleep(6000);
    await pair.start();
    await sleep(1000);
    await pair.stopPostgres();
    await sleep(6000);
    await pair.start();
    const restartedAt = Date.now();
    back = true;
    await watched;
    const readyAfter = (Date.now() - restartedAt) / 1000;
    const items = [...(await first), ...(await during)];

    // Writes meanwhile: refused with 503 problem+json and a Retry-After, never a 500.
    expect(refusals.map((answer) => answer.status).filter((status) => status !== 503)).toEqual([]);
    expect(refusals.length).toBeGreaterThan(0);
    for (const answer of refusals) {
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // Every service reported not-ready while its database was away, and is ready again by itself.
    expect([...notReady.keys()].sort()).toEqual(stack.services.map((s) => s.definition.name).sort());

    // Nothing lost: every pipeline OK, every approval's webhook once.
    const ok = (s: StageView[]) => s.length === KINDS.length && s.every((stage) => stage.state === 'OK');
    let seen: StageView[][] = [];
    const all = await waitFor(
      async () => {
        seen = await Promise.all(items.map((item) => latestStages(stack, item)));
        const failed = seen.find((s) => s.some((stage) => stage.state === 'FAILED'));
        if (failed) throw new Error(`a pipeline failed: ${JSON.stringify(failed)}`);
        return seen.every(ok) && seen;
      },
      // The ceiling past the product's own recovery with its default periods: a claim cut off
      // with the database is taken over after its 15 s lease, a request lost with it is sent
      // again after 30 s (up to 3 times); CEILINGS.wait (60 s) is within that.
      { what: `${items.length} pipelines OK`, timeoutMs: CEILINGS.longWait },
    ).catch(async (error: Error) => {
      const stuck = items.filter((_, i) => !ok(seen[i] ?? []));
      throw new Error(`${error.message}\n${await stuckPipelines(stack, stuck, seen, items)}`);
    });
    const pipelinesOkAfter = (Date.now() - restartedAt) / 1000;
    expect(all).toHaveLength(BEFORE + DURING);
    await waitFor(() => receiver.countsById().size >= items.length, {
      what: `${items.length} webhooks`,
      // A delivery cut off with the database is leased for 30 s, its retries back off up to 60 s.
      timeoutMs: CEILINGS.longWait,
    }).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await undelivered(stack, service, receiver)}`);
    });
    await sleep(1000);
    // A 503 meant "not done": the catalog holds one Change Instance per accepted submission.
    const catalog = stack.service('catalog').context.mongo.connection;
    expect(await catalog.collection('change_instances').countDocuments({ service_id: service })).toBe(
      items.length,
    );
    const hooks = [...receiver.countsById().values()];
    expect({ fires: hooks.length, repeated: hooks.filter((n) => n !== 1).length }).toEqual({
      fires: items.length,
      repeated: 0,
    });
    // Provider calls: every stage called; repeats counted and bounded (at least once, decisions
    // 0018 and 0051): a call cut off with the database may be taken over once, no more. (Before
    // 0051 a claim whose insert failed while PostgreSQL was down counted as claimed: the stage was
    // called again on every redelivery, 4-5 times.)
    const perCall = new Map<string, number>();
    for (const request of fake.requestsTo('/chat/completions'))
      perCall.set(callKey(request), (perCall.get(callKey(request)) ?? 0) + 1);
    expect(perCall.size).toBe(items.length * KINDS.length);
    const repeated = [...perCall.values()].filter((n) => n > 1);
    expect(Math.max(1, ...perCall.values())).toBeLessThanOrEqual(2);
    process.stdout.write(
      `database restart: outage ${((restartedAt - killedAt) / 1000).toFixed(1)} s, all ready ` +
        `${readyAfter.toFixed(1)} s after; ${refusals.length} writes refused 503; ${items.length} pipelines OK ` +
        `${pipelinesOkAfter.toFixed(1)} s after; ` +
        `${receiver.requests.length} webhooks for ${hooks.length} approvals; ${repeated.length} of ${perCall.size} ` +
        `stages called more than once (${repeated.reduce((sum, n) => sum + n - 1, 0)} extra calls)\n`,
    );
  });
});

/**
 * For a time-out's message: each pipeline not OK yet, its stages as the API showed them last and
 * as the orchestrator stores them, and the llm-gateway's claims and calls of it, so the failure
 * names where it stopped (a request never answered, a claim still leased, a stage never started).
 */
async function stuckPipelines(stack: Stack, stuck: number[], seen: StageView[][], items: number[]) {
  const orchestrator = stack.service('pipeline-orchestrator').context.mongo.connection;
  const llm = stack.service('llm-gateway').context.mongo.connection;
  const lines = [`${stuck.length} of ${items.length} pipelines not OK (Service Items ${stuck.join(', ')}):`];
  for (const item of stuck) {
    const stages = seen[items.indexOf(item)] ?? [];
    lines.push(
      `  item ${item}: ${stages.map((s) => `${s.stage} ${s.state ?? 'not started'}`).join(', ') || 'no pipeline'}`,
    );
    const stored = await orchestrator
      .collection('pipelines')
      .find({ service_item_id: item })
      .toArray()
      .catch((error: Error) => `(unreadable: ${error.message})`);
    lines.push(`    stored: ${JSON.stringify(stored, withoutPayloads).slice(0, 3000)}`);
    const ids = Array.isArray(stored) ? stored.map((pipeline) => pipeline._id) : [];
    const [claims, calls] = await Promise.all(
      ['llm_call_claims', 'llm_calls'].map((name) =>
        llm
          .collection(name)
          .find({ pipeline_id: { $in: ids } })
          .toArray()
          .catch((error: Error) => `(unreadable: ${error.message})`),
      ),
    );
    lines.push(`    llm_call_claims: ${JSON.stringify(claims).slice(0, 1500)}`);
    lines.push(`    llm_calls: ${JSON.stringify(calls).slice(0, 1500)}`);
  }
  return lines.join('\n');
}

/** The stored pipeline without what a stage produced (its PackData, the declaration): states, ids and times fit. */
const withoutPayloads = (key: string, value: unknown) => (key.endsWith('_json') ? undefined : value);

/** For a time-out's message: the dispatcher's responses of the Service's webhooks, by state, and what arrived. */
async function undelivered(stack: Stack, service: number, receiver: Receiver) {
  const dispatcher = stack.service('webhook-dispatcher').context.mongo.connection;
  const responses = await dispatcher
    .collection('webhook_responses')
    .find(
      {},
      {
        projection: {
          _id: 1,
          webhook_id: 1,
          seq: 1,
          state: 1,
          attempt_count: 1,
          due_at: 1,
          lease_until: 1,
          error: 1,
        },
      },
    )
    .toArray()
    .catch((error: Error) => `(unreadable: ${error.message})`);
  return (
    `the receiver got ${receiver.requests.length} requests (${receiver.countsById().size} webhook-ids) ` +
    `for Service ${service}; the dispatcher's responses: ${JSON.stringify(responses).slice(0, 4000)}`
  );
}
