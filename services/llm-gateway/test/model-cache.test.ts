import { startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { startLlmGateway, type LlmGatewayHarness } from './harness';
import { KEY, LOOPBACK, Requester, vendor1Model } from './generate-helpers';

/** LLM_MODEL_CACHE_MS of replica B: the bound docs/reference/configuration.md and decision 0018 give for another replica. */
const BOUND_MS = 2000;

/**
 * "A create after a cached miss is seen at once on the writing replica and within the
 * documented bound on another". Two replicas of the llm-gateway on one database and broker
 * namespace. A keeps model profiles for 5 minutes, longer than the test: only forgetting on its
 * own create can make it see the new model. B keeps them for BOUND_MS and hears of nothing: a
 * create through A reaches it when its cached "no such model" expires.
 */
describe('the model profile cache on two replicas, misses included', () => {
  let a: LlmGatewayHarness;
  let b: LlmGatewayHarness | undefined;
  let requester: Requester;
  let fake: FakeProviderServer;

  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKey: KEY });
    a = await startLlmGateway({ env: { ...LOOPBACK, LLM_MODEL_CACHE_MS: '300000' } });
    requester = await Requester.start(a);
  });
  afterAll(async () => {
    await requester?.stop();
    await fake?.close();
    await b?.stop();
    await a?.stop();
  });

  /** The id the next model created gets (ids are handed out one after another). */
  const nextModelId = async () => (await vendor1Model(a, fake, { name: `probe ${Date.now()}` })) + 1;

  /** Generates with `model` on whichever replica consumes, and returns the result's outcome. */
  async function generate(model: number) {
    const request = requester.request(model);
    await requester.publish(request);
    const result = await requester.resultOf(request);
    return { ok: result.ok, error: result.error, output: result.output };
  }

  const created = { ok: true, error: null, output: 'Hello from the fake provider.' };
  const missing = (id: number) => ({
    ok: false,
    error: { kind: 'model_not_found', message: `no LLM model with id ${id}` },
    output: null,
  });

  it('the writing replica generates with a model it has just created, though it had cached "no such model" for its id', async () => {
    const id = await nextModelId();
    expect(await generate(id)).toEqual(missing(id));

    expect(await vendor1Model(a, fake)).toBe(id);
    expect(await generate(id)).toEqual(created);
  });

  it('another replica generates with it once LLM_MODEL_CACHE_MS has passed since the create', async () => {
    b = await a.replica({ env: { LLM_MODEL_CACHE_MS: String(BOUND_MS) } });
    // From here B takes every request; A still answers HTTP (the create).
    await a.service.context.broker.stopConsuming();
    const id = await nextModelId();
    expect(await generate(id)).toEqual(missing(id)); // B caches the miss
    const filledBy = Date.now();

    expect(await vendor1Model(a, fake)).toBe(id);
    // B's entry was filled before the create, so it has expired once the bound has passed on B's clock.
    await waitFor(() => Date.now() > filledBy + BOUND_MS, { what: 'LLM_MODEL_CACHE_MS to pass' });
    expect(await generate(id)).toEqual(created);
  });
});
