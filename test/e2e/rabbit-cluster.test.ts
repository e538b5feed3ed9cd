import path from 'node:path';
import {
  CEILINGS,
  LeakScan,
  metricsText,
  Receiver,
  REPO_ROOT,
  startFakeOpenAi,
  waitFor,
  type FakeProviderServer,
} from '@pack/testkit';
import { callKey, latestStages, type StageView } from '../pipeline-actors';
import { consumersPerQueue, NODE_IDS, RabbitCluster } from '../rabbit-cluster';
import { activeProcessors, modelKnownToOrchestrator, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-cluster-0000';
const KINDS = ['config', 'verify', 'execution'];
const SERVICES = [
  'settings',
  'catalog',
  'llm-gateway',
  'pipeline-orchestrator',
  'webhook-dispatcher',
  'gateway',
];
/** Pipelines before the kill and while the services fail over. */
const BEFORE = 6;
const DURING = 6;
/** The start (three nodes clustered, then the stack) and each test: the long ceiling. */
const BOUND_MS = CEILINGS.longTest;

/**
 * "Losing a node loses nothing". A three-node RabbitMQ cluster of its own
 * (scripts/rabbit-cluster.sh, ports 5691-5693), every service given the three nodes' URLs
 * (decision 0049), and the node that leads the most quorum queues killed with -9 while
 * pipelines run and webhooks fire on every approval. It stays down until the end.
 */
describe('a RabbitMQ cluster losing a node', () => {
  const cluster = new RabbitCluster(path.join(REPO_ROOT, '.local/rabbit-cluster-e2e'), 5691);
  let stack: Stack | undefined;
  let fake: FakeProviderServer;
  let receiver: Receiver;
  const leaks = new LeakScan();

  beforeAll(async () => {
    const url = cluster.up();
    [fake, receiver] = await Promise.all([startFakeOpenAi({ apiKey: KEY }), new Receiver().start()]);
    const env = Object.fromEntries(SERVICES.map((name) => [name, { AMQP_URL: url }]));
    stack = await startStack({ env, leaks });
  }, BOUND_MS);
  afterAll(async () => {
    await fake?.close();
    await receiver?.stop();
    try {
      await stack?.stop();
    } finally {
      cluster.down();
    }
  });

  async function setUp() {
    const model = await stack!.call('POST', '/v1/ai/llm_models/', {
      body: {
        name: 'Cluster model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        input_price_per_1m_tokens: '1',
        output_price_per_1m_tokens: '2',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(model.status).toBe(201);
    await modelKnownToOrchestrator(stack!, model.body.id);
    const service = await stack!.call('POST', '/v1/catalog/services/', {
      body: { name: 'Cluster', auto_approval: true },
    });
    await activeProcessors(stack!, service.body.id, model.body.id, KINDS);
    const hook = await stack!.call('POST', '/v1/external/serviceowner/webhooks/', {
      body: {
        name: 'On approval',
        service: service.body.id,
        target_url: receiver.url,
        change_instance_state: 'APPROVED',
      },
    });
    expect(hook.status).toBe(201);
    return service.body.id as number;
  }

  /** A consumer's declaration, auto-approved: its Service Item. Sent again 0.5 s after a refusal (a 503 while failing over). */
  async function declare(service: number, n: number, refused: number[]): Promise<number> {
    const token = await stack!.issueToken('consumer');
    for (;;) {
      const answer = await stack!.call('POST', `/v1/catalog/services/${service}/declarations/`, {
        token,
        body: { declaration: { n } },
      });
      if (answer.status === 201) return answer.body.change_instance.service_item as number;
      refused.push(answer.status);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  it(
    'kill -9 of the node leading the most queues among those the services are connected to: every pipeline OK, every webhook once, each provider call at most twice, every queue consumed',
    async () => {
      fake.always({ latencyMs: 300 });
      const service = await setUp();
      const brokers = SERVICES.map((name) => stack!.service(name).context.broker);
      const queues = [...new Set(brokers.flatMap((broker) => broker.declaredQueues()))];
      // Every queue a quorum queue with a replica on each of the three nodes.
      // (The broadcast queues, one per connection and gone with it, are not among them.)
      const members = cluster.members(`${stack!.brokerNamespace}.`, 'a');
      expect(queues.map((queue) => [queue, members[queue]])).toEqual(queues.map((queue) => [queue, 3]));

      const refused: number[] = [];
      const first = Promise.all(Array.from({ length: BEFORE }, (_, i) => declare(service, i, refused)));
      // A loaded machine (the whole suite in parallel) may take a while to get there.
      await waitFor(async () => fake.requestsTo('/chat/completions').length >= 4, {
        what: 'pipelines under way',
      });
      // A queue's leader starts on the node its declaring service is connected to, and elections
      // may move it: the node killed is the one leading the most queues among those holding the
      // services' connections, so the kill cuts both leaders and connections.
      const { counts } = cluster.leaders();
      // rabbitmqctl leaves out what a busy node did not report in time: listed again until every
      // service's connection is there.
      const connections = await waitFor(
        () => {
          const listed = cluster.connectionsPerNode('a');
          return Object.values(listed).reduce((sum, n) => sum + n, 0) >= brokers.length && listed;
        },
        { what: "the services' connections listed by the cluster" },
      );
      const most = NODE_IDS.filter((node) => (connections[node] ?? 0) > 0).reduce((best, node) =>
        (counts[node] ?? 0) > (counts[best] ?? 0) ? node : best,
      );
      const dropped = connections[most]!;
      const killedAt = Date.now();
      cluster.kill(most);
      // Disconnected (the socket reset at once), then connected again: seconds since the kill.
      const ready = waitFor(() => brokers.some((broker) => !broker.isReady()))
        .then(() =>
          waitFor(() => brokers.every((broker) => broker.isReady()), {
            what: 'every service connected again',
          }),
        )
        .then(() => (Date.now() - killedAt) / 1000);
      // Awaited at the end: should the test fail before, its rejection must not surface in the
      // next file the worker runs.
      ready.catch(() => undefined);
      const during = Array.from({ length: DURING }, (_, i) => declare(service, BEFORE + i, refused));
      const items = [...(await first), ...(await Promise.all(during))];

      const stages = await waitFor(
        async () => {
          const all = await Promise.all(items.map((item) => latestStages(stack!, item)));
          const ended = (s: StageView[]) =>
            s[2]?.state === 'OK' || s.some((stage) => stage.state === 'FAILED');
          return all.every(ended) && all;
        },
        // Room for the orchestrator's resend of a stage request (30 s), the designed last resort.
        { what: `${items.length} pipelines ended`, timeoutMs: CEILINGS.longWait },
      ).catch(async (error: Error) => {
        // For the reader of a failure: where each pipeline stands, and the services' warnings.
        const all = await Promise.all(items.map((item) => latestStages(stack!, item)));
        const warnings = leaks
          .loggedLines()
          .filter((line) => /"level":"(warn|error|fatal)"/.test(line))
          .slice(-40);
        throw new Error(
          `${error.message}\n${all.map((st, i) => `item ${items[i]}: ${st.map((x) => `${x.stage} ${x.state}`).join(', ')}`).join('\n')}\n${warnings.join('\n')}`,
        );
      });
      expect(stages.flat().map((stage) => [stage.stage, stage.state])).toEqual(
        items.flatMap(() => KINDS.map((kind) => [kind.toUpperCase(), 'OK'])),
      );
      // Every webhook delivered exactly once (the last may still be on its way).
      await waitFor(async () => receiver.countsById().size >= items.length, {
        what: 'a webhook per approval',
      });
      expect([...receiver.countsById().values()]).toEqual(items.map(() => 1));
      // Each stage called at least once; a repeat (a request redelivered after the kill) is bounded.
      const perCall = new Map<string, number>();
      for (const request of fake.requestsTo('/chat/completions'))
        perCall.set(callKey(request), (perCall.get(callKey(request)) ?? 0) + 1);
      expect(perCall.size).toBe(items.length * KINDS.length);
      const repeated = [...perCall.values()].filter((count) => count > 1);
      expect(Math.max(...perCall.values())).toBeLessThanOrEqual(2);
      // No consumer left without a channel: every service ready, every shared queue consumed.
      expect(brokers.map((broker) => broker.isReady())).toEqual(brokers.map(() => true));
      const consumers = await consumersPerQueue(
        cluster.url,
        queues.filter((queue) => !/\.(retries|dlq)$/.test(queue)),
      );
      expect(Object.entries(consumers).filter(([, count]) => count < 1)).toEqual([]);
      // Stage requests the orchestrator had to send again (its sweeper, after 30 s without a result).
      const resent = (await metricsText(stack!.service('pipeline-orchestrator').metricsUrl))
        .split('\n')
        .filter((line) => line.startsWith('pipeline_stage_requests_resent_total'))
        .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
      process.stdout.write(
        `cluster node ${most} killed (it led ${counts[most]} of ${Object.values(counts).reduce((a, n) => a + n, 0)} ` +
          `quorum queues; ${dropped} service connections on it, all connected again after ` +
          `${(await ready).toFixed(1)} s): ${items.length} pipelines OK, ` +
          `${receiver.countsById().size} webhooks once each, ${repeated.length} provider calls repeated, ${resent} stage requests resent, ` +
          `${refused.length} declarations refused meanwhile (${[...new Set(refused)].join(', ') || '-'}), ` +
          `all ended ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill\n`,
      );
    },
    BOUND_MS,
  );
});
