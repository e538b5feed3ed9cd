import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { CEILINGS } from '../ceilings';
import { ownedTempDir } from '../leftover-files';
import type { StartedProcess } from '../process';
import { waitFor } from '../waiting';
import { removeNamespace } from './leftover-networks';
import type { Host, PartitionNet } from './net';

const RMQ_BIN = '/usr/lib/rabbitmq/bin';
const AMQP_PORT = 5672;

/** A RabbitMQ node of the cluster: its host (namespace), its long node name, its server process. */
export interface RabbitNode {
  id: string;
  host: Host;
  /** `rabbit@<address>`: a long name on the host's address, which every host resolves alike. */
  name: string;
  url: string;
  server: StartedProcess;
}

/**
 * A RabbitMQ cluster (Debian's rabbitmq-server) with each node in a host of its own on the
 * partition bridge: its own epmd and distribution port (the namespace's), a long node name on
 * its address, its data and logs in a folder of the owner's (removed on stop, or by a later run
 * once the owner is gone, as the namespaces are). Every node listens on 5672 of its address, so
 * that isolating or splitting the hosts partitions the cluster and the clients alike.
 * `cluster_partition_handling = pause_minority` and `net_ticktime = 15`, as docs/operations.md
 * advises.
 */
export class NamespacedRabbitCluster {
  private constructor(
    readonly dir: string,
    readonly nodes: RabbitNode[],
  ) {}

  /** `ids.length` nodes started together, clustering as they boot. */
  static async start(net: PartitionNet, ids = ['a', 'b', 'c']): Promise<NamespacedRabbitCluster> {
    const dir = ownedTempDir('rabbit-cluster');
    const hosts = ids.map((id) => net.addHost(`rabbit-${id}`));
    prepare(
      dir,
      hosts.map((host) => nodeName(host)),
    );
    const nodes = ids.map((id, index) => startNode(net, dir, id, hosts[index]!));
    const cluster = new NamespacedRabbitCluster(dir, nodes);
    try {
      await Promise.all(nodes.map((node) => cluster.awaitStartup(node)));
      const running = await cluster.ctl(nodes[0]!, 'eval', 'length(rabbit_nodes:all_running()).');
      if (Number(running.trim()) !== nodes.length)
        throw new Error(`the cluster has ${running.trim()} running nodes, not ${nodes.length}`);
      return cluster;
    } catch (error) {
      cluster.stop();
      throw error;
    }
  }

  /** The nodes' AMQP URLs, comma-separated, as AMQP_URL takes them (decision 0049). */
  get url(): string {
    return this.nodes.map((node) => node.url).join(',');
  }

  node(id: string): RabbitNode {
    const node = this.nodes.find((candidate) => candidate.id === id);
    if (!node) throw new Error(`no node ${id} in the cluster`);
    return node;
  }

  /** rabbitmqctl against `node`, from the root namespace (which reaches every host unless cut). */
  async ctl(node: RabbitNode, ...args: string[]): Promise<string> {
    const { stdout } = await promisify(execFile)(
      path.join(RMQ_BIN, 'rabbitmqctl'),
      ['-q', '--longnames', '-n', node.name, ...args],
      { encoding: 'utf8', timeout: CEILINGS.wait, env: { ...process.env, ...cliEnv(this.dir) } },
    );
    return stdout;
  }

  private async awaitStartup(node: RabbitNode): Promise<void> {
    let ended = false;
    void node.server.exited.then(() => (ended = true));
    await waitFor(
      async () =>
        ended ||
        (await this.ctl(node, 'await_startup', '-t', '10').then(
          () => true,
          () => false,
        )),
      { timeoutMs: CEILINGS.start, what: `RabbitMQ ${node.name} to start` },
    );
    if (ended) {
      const result = await node.server.exited;
      throw new Error(`RabbitMQ ${node.name} ended while starting: ${result.stdout.slice(-2000)}`);
    }
  }

  /**
   * Every queue: its leader's node (a quorum queue's; a classic queue's home), its messages
   * (ready, unacknowledged) and consumers, asked of `via`. An `eval` run on the node: listing
   * commands stream rows to the CLI from every node, which the nodes cannot reach (the CLI is in
   * the root namespace under the machine's host name); a quorum queue's counts are asked of its
   * leader's node, the only one that keeps them.
   */
  async queues(via: RabbitNode): Promise<Map<string, ClusterQueue>> {
    const listed = await this.ctl(via, 'eval', QUEUES_EVAL);
    const queues = new Map<string, ClusterQueue>();
    for (const line of listed.split('\n')) {
      const [name, leader, messages, ready, unacknowledged, consumers] = line.trim().split(' ');
      const node = this.nodes.find((candidate) => candidate.name === leader);
      if (name && consumers !== undefined)
        queues.set(name, {
          leader: node?.id ?? leader!,
          messages: Number(messages),
          ready: Number(ready),
          unacknowledged: Number(unacknowledged),
          consumers: Number(consumers),
        });
    }
    return queues;
  }

  /** How many of the queues whose names start with `prefix` each node leads. */
  async leaders(via: RabbitNode, prefix = ''): Promise<Map<string, number>> {
    const counts = new Map<string, number>(this.nodes.map((node) => [node.id, 0]));
    for (const [name, queue] of await this.queues(via))
      if (name.startsWith(prefix) && counts.has(queue.leader))
        counts.set(queue.leader, counts.get(queue.leader)! + 1);
    return counts;
  }

  /** Client connections each node holds, as `via` knows them. */
  async connections(via: RabbitNode): Promise<Map<string, number>> {
    const counts = new Map<string, number>(this.nodes.map((node) => [node.id, 0]));
    const listed = await this.ctl(via, 'eval', CONNECTIONS_EVAL);
    for (const line of listed.split('\n')) {
      const node = this.nodes.find((candidate) => candidate.name === line.trim());
      if (node) counts.set(node.id, counts.get(node.id)! + 1);
    }
    return counts;
  }

  /** Every node's host removed with what runs in it (server, epmd), then the nodes' folder. */
  stop(): void {
    for (const node of this.nodes) removeNamespace(node.host.namespace);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A queue of the cluster, as NamespacedRabbitCluster.queues lists it. */
export interface ClusterQueue {
  /** The id of the node leading it (of its home, for a classic queue). */
  leader: string;
  messages: number;
  ready: number;
  unacknowledged: number;
  consumers: number;
}

/** One line per queue: name, leader's node, messages, ready, unacknowledged, consumers (-1: not known). */
const QUEUES_EVAL = `Items = [messages, messages_ready, messages_unacknowledged, consumers],
[begin
  L = case amqqueue:get_pid(Q) of {_, N} -> N; P -> node(P) end,
  I = case rpc:call(L, rabbit_amqqueue, info, [Q, Items], 10000) of R when is_list(R) -> R; _ -> [] end,
  io:format("~s ~s ~s~n", [element(4, amqqueue:get_name(Q)), L,
    lists:join(" ", [integer_to_list(proplists:get_value(K, I, -1)) || K <- Items])])
end || Q <- rabbit_amqqueue:list()], ok.`;

/** One line per client connection: the node holding it. */
const CONNECTIONS_EVAL = `[io:format("~s~n", [node(P)]) || P <- rabbit_networking:connections()], ok.`;

/** The environment of a node and of the CLI: one Erlang cookie in the cluster's own HOME. */
const cliEnv = (dir: string) => ({ HOME: path.join(dir, 'home'), RABBITMQ_USE_LONGNAME: 'true' });

/** `rabbit@<address>`: a long name on the host's address, which every host resolves alike. */
const nodeName = (host: Host) => `rabbit@${host.address}`;

function prepare(dir: string, names: string[]): void {
  mkdirSync(path.join(dir, 'home'), { recursive: true });
  writeFileSync(path.join(dir, 'home', '.erlang.cookie'), randomBytes(16).toString('hex'), { mode: 0o400 });
  writeFileSync(path.join(dir, 'rabbitmq-env.conf'), '');
  writeFileSync(path.join(dir, 'enabled_plugins'), '[].');
  writeFileSync(path.join(dir, 'advanced.config'), '[].');
  // Clients reach the nodes over the bridge: guest may log in from there.
  writeFileSync(
    path.join(dir, 'rabbitmq.conf'),
    [
      'loopback_users = none',
      'log.file.level = warning',
      'log.console = false',
      'cluster_partition_handling = pause_minority',
      // The nodes notice a silent peer after 15-20 s instead of 45-75 s: until then a client's
      // declarations on reconnect wait for the cut node (decision 0061).
      'net_ticktime = 15',
      `listeners.tcp.default = ${AMQP_PORT}`,
      // The cluster forms as the nodes boot: a node on fresh data joins the listed ones (peer
      // discovery, under a lock since RabbitMQ 3.8.18, so the three may start at once).
      'cluster_formation.peer_discovery_backend = classic_config',
      ...names.map((name, index) => `cluster_formation.classic_config.nodes.${index + 1} = ${name}`),
      '',
    ].join('\n'),
  );
}

function startNode(net: PartitionNet, dir: string, id: string, host: Host): RabbitNode {
  const name = nodeName(host);
  const own = path.join(dir, id);
  mkdirSync(path.join(own, 'log'), { recursive: true });
  const env = {
    ...cliEnv(dir),
    RABBITMQ_NODENAME: name,
    RABBITMQ_MNESIA_BASE: path.join(own, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(own, 'log'),
    RABBITMQ_LOGS: path.join(own, 'log', 'rabbit.log'),
    RABBITMQ_PLUGINS_EXPAND_DIR: path.join(own, 'plugins-expand'),
    RABBITMQ_PID_FILE: path.join(own, 'rabbit.pid'),
    RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, 'advanced.config'),
    RABBITMQ_CONF_ENV_FILE: path.join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
    ERL_CRASH_DUMP: path.join(own, 'erl_crash.dump'),
  };
  // Lives as long as the kit's processes may: the namespace's removal ends it before.
  const server = net.exec(host, path.join(RMQ_BIN, 'rabbitmq-server'), [], env);
  return { id, host, name, url: `amqp://guest:guest@${host.address}:${AMQP_PORT}`, server };
}
