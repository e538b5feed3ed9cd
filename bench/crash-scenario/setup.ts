/**
 * What the crash scenario and the soak set up through the gateway: a Service Owner's
 * auto-approved Service with active config, verify and execution processors on a model of a
 * local OpenAI-shaped provider, a webhook on APPROVED to a local receiver, and consumers' tokens.
 */
import { call, waitFor, type CallResult, type FakeProviderServer, type Receiver } from '@pack/testkit';
import type { Fleet } from './fleet';

export const KEY = 'sk-bench-crash-0000';
export const KINDS = ['config', 'verify', 'execution'];

export async function setUp(
  fleet: Fleet,
  fake: FakeProviderServer,
  receiver: Receiver,
  consumerCount: number,
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

/** Every list a user reads, as the Service's owner or as the admin (the soak reads them in turn). */
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
