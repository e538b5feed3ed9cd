import {
  CEILINGS,
  NamespacedDatabase,
  NamespacedRabbitCluster,
  PartitionNet,
  Receiver,
  startFakeOpenAi,
  type FakeProviderServer,
  type HostedService,
  type QueueDepth,
} from '@pack/testkit';
import { activeProcessors, modelKnownToOrchestrator, startStack, type Stack } from '../stack';
import { check, checkStart, type CheckRow } from './checker';

export const KEY = 'sk-e2e-partitions-0000';
export const KINDS = ['config', 'verify', 'execution'];
const SERVICES = [
  'settings',
  'catalog',
  'llm-gateway',
  'pipeline-orchestrator',
  'webhook-dispatcher',
  'gateway',
];

/**
 * What every partition scenario runs on: the partition network, the database pair in a host of
 * its own, the stack in the root namespace (its broker link through the bridge's broker relay, so
 * that a slow broker link slows it too), a fake provider, a webhook receiver, and a Service with
 * three processors and a webhook on approval, its declarations approved automatically.
 */
export interface World {
  net: PartitionNet;
  /** Every service's database server (replicas started in hosts included). */
  database: NamespacedDatabase;
  stack: Stack;
  fake: FakeProviderServer;
  receiver: Receiver;
  service: number;
  /** With `cluster`: the stack's broker, three RabbitMQ nodes each in a host of its own. */
  cluster?: NamespacedRabbitCluster;
  queueDepths?: (namespace: string) => Promise<Map<string, QueueDepth>>;
}

/**
 * The world; with `cluster`, the stack's broker is a RabbitMQ cluster of three nodes each in a
 * host of its own (every service given the three URLs) instead of the shared node's relay.
 */
export async function startWorld(
  env: Record<string, Record<string, string>> = {},
  { cluster: withCluster = false } = {},
): Promise<World> {
  const net = PartitionNet.create();
  let cluster: NamespacedRabbitCluster | undefined;
  let database: NamespacedDatabase | undefined;
  try {
    database = await NamespacedDatabase.start(net);
    cluster = withCluster ? await NamespacedRabbitCluster.start(net) : undefined;
    const brokerUrl = cluster?.url ?? (await net.moved(process.env.AMQP_URL!, net.brokerAddress));
    const [fake, receiver] = await Promise.all([startFakeOpenAi({ apiKey: KEY }), new Receiver().start()]);
    const links = { AMQP_URL: brokerUrl, MONGO_URL: database.url };
    const stack = await startStack({
      env: Object.fromEntries(SERVICES.map((name) => [name, { ...links, ...env[name] }])),
    });
    const world: World = { net, database, stack, fake, receiver, service: 0, cluster };
    if (cluster) world.queueDepths = (namespace) => clusterQueueDepths(cluster!, namespace);
    world.service = await serviceWithWebhook(world);
    return world;
  } catch (error) {
    cluster?.stop();
    database?.stop();
    await net.destroy();
    throw error;
  }
}

/** The stack's queues in the cluster, asked of the first node that answers. */
async function clusterQueueDepths(
  cluster: NamespacedRabbitCluster,
  namespace: string,
): Promise<Map<string, QueueDepth>> {
  let lastError: unknown;
  for (const node of cluster.nodes) {
    const queues = await cluster.queues(node).catch((error: unknown) => (lastError = error));
    if (queues instanceof Map)
      return new Map([...queues].filter(([name]) => name.startsWith(`${namespace}.`)));
  }
  throw lastError;
}

export async function stopWorld(world: World | undefined): Promise<void> {
  if (!world) return;
  try {
    world.net.heal();
    await world.fake.close();
    await world.receiver.stop();
    await world.stack.stop();
  } finally {
    world.cluster?.stop();
    world.database.stop();
    await world.net.destroy();
  }
}

async function serviceWithWebhook({ stack, fake, receiver }: World): Promise<number> {
  const model = await stack.call('POST', '/v1/ai/llm_models/', {
    body: {
      name: 'Partition model',
      provider: 'vendor1',
      model_name: 'gpt-4o-mini',
      input_price_per_1m_tokens: '1',
      output_price_per_1m_tokens: '2',
      extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
    },
  });
  if (model.status !== 201) throw new Error(`creating the model answered ${model.status}`);
  await modelKnownToOrchestrator(stack, model.body.id);
  const service = await stack.call('POST', '/v1/catalog/services/', {
    body: { name: 'Partitioned', auto_approval: true },
  });
  await activeProcessors(stack, service.body.id, model.body.id, KINDS);
  const hook = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
    body: {
      name: 'On approval',
      service: service.body.id,
      target_url: receiver.url,
      change_instance_state: 'APPROVED',
    },
  });
  if (hook.status !== 201) throw new Error(`creating the webhook answered ${hook.status}`);
  return service.body.id as number;
}

/** `n` consumers' declarations, submitted together, auto-approved: their Service Items. */
export async function declare({ stack, service }: World, n: number, from = 0): Promise<number[]> {
  const tokens = await Promise.all(Array.from({ length: n }, () => stack.issueToken('consumer')));
  return Promise.all(
    tokens.map(async (token, i) => {
      const answer = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
        token,
        body: { declaration: { n: from + i } },
      });
      if (answer.status !== 201) throw new Error(`a declaration answered ${answer.status}`);
      return answer.body.change_instance.service_item as number;
    }),
  );
}

/** What a hosted service's /readyz says of its links (database, broker). */
export async function readiness(service: HostedService): Promise<Record<string, boolean>> {
  const answer = await fetch(`${service.metricsUrl}/readyz`, { signal: AbortSignal.timeout(3000) }).catch(
    () => null,
  );
  return answer ? (((await answer.json()) as { checks: Record<string, boolean> }).checks ?? {}) : {};
}

/** Counts a scenario (see checker.ts) from `start`; every pipeline has the long ceiling to end. */
export function counted(
  world: World,
  scenario: string,
  start: ReturnType<typeof checkStart>,
  items: number[],
): Promise<CheckRow> {
  return check({ ...world, scenario, start, items, stages: KINDS.length, timeoutMs: CEILINGS.longWait });
}

export { checkStart };
