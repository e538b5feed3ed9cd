/** The crash scenario's set-up and its outcome, shared by bench/crash-scenario, bench/cluster and bench/soak. */
import { call, waitFor, type CallResult, type FakeProviderServer, type Receiver } from '@pack/testkit';
import { callKey, type StageView } from '../../test/pipeline-actors';
import type { Fleet } from './fleet';

export const CONSUMERS = Number(process.env.CONSUMERS ?? 25);
export const KEY = 'sk-bench-crash-0000';
export const KINDS = ['config', 'verify', 'execution'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One consumer's declaration (`{ n }`), sent until the gateway accepts it: a refusal (any status
 * but 201, or no answer: status 0) is counted in `refused` under `keyOf(status)` and the same
 * declaration is sent again 1 s later. Returns its Service Item.
 */
export async function submitDeclaration(
  gateway: string,
  service: number,
  token: string,
  n: number,
  refused: Map<string, number>,
  keyOf: (status: number) => string = String,
): Promise<number> {
  for (;;) {
    const answer = await call(gateway, 'POST', `/v1/catalog/services/${service}/declarations/`, {
      token,
      body: { declaration: { n } },
    }).catch((error: Error) => ({ status: 0, body: undefined, text: error.message }) as CallResult);
    if (answer.status === 201)
      return (answer.body as { change_instance: { service_item: number } }).change_instance.service_item;
    const key = keyOf(answer.status);
    refused.set(key, (refused.get(key) ?? 0) + 1);
    await sleep(1000);
  }
}

export async function setUp(
  fleet: Fleet,
  fake: FakeProviderServer,
  receiver: Receiver,
  consumerCount = CONSUMERS,
) {
  const gw = fleet.url('gateway');
  const idOf = (answer: CallResult) => (answer.body as { id: number }).id;
  const as = async (token: string, method: string, route: string, body?: unknown): Promise<CallResult> => {
    const answer = await call(gw, method, route, { token, ...(body === undefined ? {} : { body }) });
    if (answer.status >= 300) throw new Error(`${method} ${route} answered ${answer.status}: ${answer.text}`);
    return answer;
  };
  const token = async (role: string) =>
    (
      (await as(fleet.adminToken, 'POST', '/v1/core/tokens/', { username: `${role}_${Math.random()}`, role }))
        .body as { token: string }
    ).token;
  const owner = await token('service_owner');
  const consumers: string[] = [];
  for (let i = 0; i < consumerCount; i++) consumers.push(await token('consumer'));
  const model = await as(fleet.adminToken, 'POST', '/v1/ai/llm_models/', {
    name: 'Crash scenario model',
    provider: 'vendor1',
    model_name: 'gpt-4o-mini',
    input_price_per_1m_tokens: '1',
    output_price_per_1m_tokens: '2',
    extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
  });
  const service = await as(owner, 'POST', '/v1/catalog/services/', {
    name: 'Crash scenario',
    auto_approval: true,
  });
  for (const kind of KINDS)
    await as(owner, 'POST', '/v1/ai/processors/', {
      name: kind,
      service: idOf(service),
      kind,
      llm_model: idOf(model),
      prompt: `Do ${kind}.`,
      active: true,
    });
  // Declarations wait until the orchestrator knows the model and the three processors (events
  // from the llm-gateway): before that, an approval would start a pipeline without them.
  await waitFor(
    async () => {
      const [processors, models] = await Promise.all([
        fleet.collection('pipeline-orchestrator', 'ai_processors', (c) => c.countDocuments({})),
        fleet.collection('pipeline-orchestrator', 'llm_models', (c) => c.countDocuments({})),
      ]);
      return (processors >= KINDS.length && models >= 1) || undefined;
    },
    { timeoutMs: 60_000, what: 'the orchestrator to learn of the model and its processors' },
  );
  const hook = await as(owner, 'POST', '/v1/external/serviceowner/webhooks/', {
    name: 'On approval',
    service: idOf(service),
    target_url: receiver.url,
    change_instance_state: 'APPROVED',
  });
  return { owner, consumers, service: idOf(service), hook: idOf(hook) };
}

export function listReads(service: number, hook: number): { route: string; as: 'owner' | 'admin' }[] {
  const admin = (route: string) => ({ route, as: 'admin' as const });
  const owner = (route: string) => ({ route, as: 'owner' as const });
  return [
    admin('/v1/catalog/services/'),
    admin('/v1/catalog/change_instances/'),
    admin('/v1/catalog/service_items/'),
    owner('/v1/external/serviceowner/pack/pipelines/?limit=20'),
    owner('/v1/external/serviceowner/webhooks/'),
    owner(`/v1/external/serviceowner/webhooks/${hook}/responses/`),
    owner('/v1/external/serviceowner/webhook_responses/'),
    admin('/v1/ai/llm_models/'),
    owner(`/v1/ai/processors/?service=${service}`),
    owner('/v1/ai/dashboard/?group_by=model'),
    admin('/v1/core/tokens/'),
    admin('/v1/core/general_settings/'),
    admin('/v1/core/general_settings/audit/'),
  ];
}

export async function stagesOf(fleet: Fleet, owner: string, item: number): Promise<StageView[]> {
  const route = `/v1/external/serviceowner/pack/pipelines/latest/service_item/${item}/`;
  const answer = await call(fleet.url('gateway'), 'GET', route, { token: owner }).catch(() => null);
  return answer?.status === 200 ? ((answer.body as { stages?: StageView[] }).stages ?? []) : [];
}

export const ended = (stages: StageView[]) =>
  stages.length === KINDS.length && stages.every((s) => s.state === 'OK')
    ? 'OK'
    : stages.some((s) => s.state === 'FAILED')
      ? 'FAILED'
      : undefined;

/**
 * Waits up to `waitS` for every item's pipeline to end (then up to 30 s for its webhook), and
 * counts: pipelines by how they ended, provider calls per stage, stages called more than once.
 */
export async function outcome(
  fleet: Fleet,
  owner: string,
  items: number[],
  fake: FakeProviderServer,
  receiver: Receiver,
  waitS: number,
) {
  const states = new Map<number, { state?: string; stages: StageView[] }>();
  const deadline = Date.now() + waitS * 1000;
  while (Date.now() < deadline) {
    for (const item of items) {
      if (states.get(item)?.state) continue;
      const stages = await stagesOf(fleet, owner, item);
      states.set(item, { state: ended(stages), stages });
    }
    if ([...states.values()].every((s) => s.state)) break;
    await sleep(500);
  }
  const lastEnded = Date.now();
  while (receiver.countsById().size < items.length && Date.now() < lastEnded + 30_000) await sleep(250);
  const count = (state?: string) => [...states.values()].filter((s) => s.state === state).length;
  const perCall = new Map<string, number>();
  for (const request of fake.requestsTo('/chat/completions'))
    perCall.set(callKey(request), (perCall.get(callKey(request)) ?? 0) + 1);
  const repeats = [...perCall.values()].filter((n) => n > 1);
  return { states, lastEnded, count, perCall, repeats };
}
