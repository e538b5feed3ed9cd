import { PartitionNet, NamespacedRabbitCluster } from '@pack/testkit';
import { existsSync, writeFileSync } from 'node:fs';
(async () => {
  const net = PartitionNet.create();
  try {
    const cluster = await NamespacedRabbitCluster.start(net);
    writeFileSync('/tmp/part-h2/cluster.json', JSON.stringify({ dir: cluster.dir, nodes: cluster.nodes.map((n) => [n.name, n.host.namespace]) }));
    console.log('started');
    while (!existsSync('/tmp/part-h2/stop')) await new Promise((r) => setTimeout(r, 500));
    cluster.stop();
  } finally {
    await net.destroy();
  }
})().catch((e) => { console.error(e); process.exit(1); });
