import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { connectAny } from '@pack/broker';
import { CEILINGS, exported, REPO_ROOT } from '@pack/testkit';

export type NodeId = 'a' | 'b' | 'c';
export const NODE_IDS: readonly NodeId[] = ['a', 'b', 'c'];

/**
 * The three-node RabbitMQ cluster of scripts/rabbit-cluster.sh, in a folder and on ports of its
 * own (`basePort`, +1, +2; distribution on +20000), so that the test and the bench never meet.
 */
export class RabbitCluster {
  url = '';

  constructor(
    private readonly dir: string,
    readonly basePort: number,
  ) {}

  /** Runs the script (its progress on this process's stderr) and returns what it printed. */
  script(...args: string[]): string {
    return execFileSync('bash', [path.join(REPO_ROOT, 'scripts/rabbit-cluster.sh'), ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: CEILINGS.longWait,
      env: { ...process.env, PACK_CLUSTER_DIR: this.dir, PACK_CLUSTER_PORT: String(this.basePort) },
    });
  }

  up(): string {
    this.url = exported(this.script('up'), 'AMQP_URL');
    return this.url;
  }

  down(): void {
    this.script('down');
  }

  port(node: NodeId): number {
    return this.basePort + NODE_IDS.indexOf(node);
  }

  /** The node that leads the most quorum queues, and how many each node leads. */
  leaders(): { most: NodeId; counts: Record<string, number> } {
    const counts: Record<string, number> = {};
    for (const line of this.script('leaders').split('\n')) {
      const match = /^pack-([abc])@\S+ (\d+)$/.exec(line.trim());
      if (match) counts[match[1]!] = Number(match[2]);
    }
    const most = NODE_IDS.reduce((best, node) => ((counts[node] ?? 0) > (counts[best] ?? 0) ? node : best));
    return { most, counts };
  }

  /** Client connections per node (by the AMQP port each one reached), as a live `node` sees them. */
  connectionsPerNode(node: NodeId): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const line of this.script('ctl', node, 'list_connections', 'port', '--no-table-headers').split(
      '\n',
    )) {
      const port = Number(line.trim());
      const owner = NODE_IDS.find((id) => this.port(id) === port);
      if (owner) counts[owner] = (counts[owner] ?? 0) + 1;
    }
    return counts;
  }

  kill(node: NodeId): void {
    this.script('kill', node);
  }

  start(node: NodeId): void {
    this.script('start', node);
  }

  stop(node: NodeId): void {
    this.script('stop', node);
  }

  /** The members (nodes holding a replica) of each queue whose name starts with `prefix`: 0 for a classic queue. */
  members(prefix: string, node: NodeId): Record<string, number> {
    const members: Record<string, number> = {};
    for (const line of this.script('ctl', node, 'list_queues', 'name', 'members', '--no-table-headers').split(
      '\n',
    ))
      if (line.startsWith(prefix)) members[line.split(/\s/)[0]!] = (line.match(/pack-[abc]@/g) ?? []).length;
    return members;
  }
}

/** Consumers on each queue (checkQueue through any live node); -1 for a queue that is not there. */
export async function consumersPerQueue(
  url: string,
  queues: readonly string[],
): Promise<Record<string, number>> {
  const connection = await connectAny(url);
  connection.on('error', () => undefined);
  const counts: Record<string, number> = {};
  try {
    for (const queue of queues) {
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      try {
        counts[queue] = (await channel.checkQueue(queue)).consumerCount;
        await channel.close();
      } catch {
        counts[queue] = -1;
      }
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
  return counts;
}
