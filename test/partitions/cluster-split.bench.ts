import { CEILINGS } from '@pack/testkit';
import { BEFORE, DURING, slowest } from './cluster-kit';
import { expectClean, reportRows } from './rows';
import { checkStart, counted, declare, startWorld, stopWorld, type World } from './scenario-kit';

afterAll(reportRows);

/**
 * bench/partitions only (not matched by the suite's `*.test.ts`; CI's time goes to the isolated
 * node of cluster.test.ts): the RabbitMQ cluster in namespaces split one node against two, with
 * service replicas on both sides.
 */
describe('a RabbitMQ cluster split in halves', () => {
  let world: World | undefined;

  beforeAll(async () => {
    world = await startWorld({}, { cluster: true });
  }, CEILINGS.longTest);
  afterAll(async () => {
    await stopWorld(world);
  });

  it(
    'the cluster split one node against two for 25 s, an orchestrator and an llm-gateway replica on the minority side',
    async () => {
      const { net, cluster, stack, fake } = world!;
      fake.always({ latencyMs: 300 });
      const [minority, ...majority] = cluster!.nodes;
      const host = net.addHost('minority');
      await net.loopback(host, Number(new URL(fake.url).port));
      const replicas = [
        await net.spawnService(host, 'pipeline-orchestrator', stack.envs['pipeline-orchestrator']!),
        await net.spawnService(host, 'llm-gateway', stack.envs['llm-gateway']!),
      ];
      const start = checkStart(fake, world!.receiver);
      const before = await declare(world!, 2 * BEFORE, 1000);
      net.split(
        [minority!.host, host],
        majority.map((node) => node.host),
      );
      // The stack (the root namespace) is on the majority's side.
      for (const address of [net.servicesAddress, net.brokerAddress, world!.database.host.address])
        net.cut(minority!.host, address);
      const splitAt = Date.now();
      const during = await declare(world!, 2 * DURING, 1000 + 2 * BEFORE);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, splitAt + 25_000 - Date.now())));
      net.heal();
      const row = await counted(
        world!,
        'cluster: split 1 against 2 for 25 s, replicas on both sides',
        start,
        [...before, ...during],
      );
      process.stdout.write(
        `split: slowest pipeline (s from the split) ${await slowest(stack, [...before, ...during], splitAt)}\n`,
      );
      expectClean(row);
      for (const replica of replicas) replica.child.kill('SIGTERM');
      await Promise.all(replicas.map((replica) => replica.exited));
    },
    CEILINGS.longTest,
  );
});
