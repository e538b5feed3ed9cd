import { CEILINGS } from '../ceilings';
import { startProcess, type StartedProcess } from '../process';
import { freePort } from '../ports';
import { serviceBundleCommand } from '../service-bundles';
import { answersReady } from '../service-process';
import { waitFor } from '../waiting';
import { ip, ipQuiet, loseOnLink, namespacesUnavailable, run } from './commands';
import { removeLink, removeNamespace } from './leftover-networks';
import { bridgeName, namespaceName, peerName, sinkName, sinkPeerName, vethName } from './names';
import { Relay } from './relay';

/** A host of the partition network: a network namespace with one address on the bridge. */
export interface Host {
  name: string;
  namespace: string;
  address: string;
  /** The root-side end of its link to the bridge. */
  veth: string;
}

/** A service started in a host: its public and internal listeners as the root namespace reaches them. */
export interface HostedService extends StartedProcess {
  url: string;
  metricsUrl: string;
}

/** A MAC address no host has: a neighbour entry pointing at it makes packets vanish unanswered. */
const NOWHERE = '02:00:00:00:00:01';
const SUBNET = '10.231';
const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * Network namespaces of the test's own, each with one address on a private bridge, joined by
 * veth pairs, and the nemeses that cut and slow their links. The root namespace holds two of the
 * bridge's addresses: `.1` for the services a host calls (fake providers, settings), `.2` for the
 * broker, each a relay to the server on the root's loopback, so that a host can be cut from the
 * broker alone. The database and the nodes of a broker cluster are hosts of their own
 * (NamespacedDatabase, NamespacedRabbitCluster). Everything carries the owner's pid in its name:
 * destroy() removes it, and a later run what a killed one left.
 */
export class PartitionNet {
  readonly hosts = new Map<string, Host>();
  private readonly relays = new Map<string, Relay>();
  private readonly cuts: { host: Host; address: string }[] = [];
  private readonly lossy = new Set<Host>();
  private readonly isolated = new Set<Host>();

  private constructor(readonly subnet: number) {}

  /** The bridge with its two root addresses on a /24 of 10.231 that no interface here uses. */
  static create(): PartitionNet {
    const why = namespacesUnavailable();
    if (why) throw new Error(`partition tests cannot run here: ${why}`);
    const used = new Set(
      [...ip('-4', '-o', 'addr', 'show').matchAll(/inet 10\.231\.(\d+)\./g)].map((m) => Number(m[1])),
    );
    const start = process.pid % 250;
    const subnet = Array.from({ length: 250 }, (_, i) => ((start + i) % 250) + 1).find((n) => !used.has(n));
    if (subnet === undefined) throw new Error('no free /24 left in 10.231.0.0/16');
    const net = new PartitionNet(subnet);
    const bridge = bridgeName();
    ip('link', 'add', bridge, 'type', 'bridge');
    for (const last of [1, 2]) ip('addr', 'add', `${net.address(last)}/24`, 'dev', bridge);
    ip('link', 'set', bridge, 'up');
    // Where a lossy link's dropped packets go: a link that is never up.
    ip('link', 'add', sinkName(), 'type', 'veth', 'peer', 'name', sinkPeerName());
    return net;
  }

  address(last: number): string {
    return `${SUBNET}.${this.subnet}.${last}`;
  }

  get servicesAddress(): string {
    return this.address(1);
  }
  get brokerAddress(): string {
    return this.address(2);
  }

  /** A new namespace `name`, its address .11, .12, ... in the order hosts are added. */
  addHost(name: string): Host {
    const index = this.hosts.size + 1;
    const host: Host = {
      name,
      namespace: namespaceName(name),
      address: this.address(10 + index),
      veth: vethName(index),
    };
    ip('netns', 'add', host.namespace);
    this.hosts.set(name, host);
    ip('link', 'add', host.veth, 'type', 'veth', 'peer', 'name', peerName(index));
    ip('link', 'set', peerName(index), 'netns', host.namespace);
    const inside = (...args: string[]) => ip('-n', host.namespace, ...args);
    inside('link', 'set', peerName(index), 'name', 'eth0');
    inside('addr', 'add', `${host.address}/24`, 'dev', 'eth0');
    inside('link', 'set', 'lo', 'up');
    inside('link', 'set', 'eth0', 'up');
    inside('link', 'add', 'sink0', 'type', 'veth', 'peer', 'name', 'sink1');
    ip('link', 'set', host.veth, 'master', bridgeName(), 'up');
    return host;
  }

  host(name: string): Host {
    const host = this.hosts.get(name);
    if (!host) throw new Error(`no host ${name} in the partition network`);
    return host;
  }

  /** A relay on `address`:`port` of the bridge to `port` (or `targetPort`) on the root's loopback. */
  async relay(address: string, port: number, targetPort = port): Promise<Relay> {
    const key = `${address}:${port}`;
    const known = this.relays.get(key);
    if (known) return known;
    const relay = await new Relay(address, port, '127.0.0.1', targetPort).start();
    this.relays.set(key, relay);
    return relay;
  }

  /** The broker's relay (started by envFor or brokerUrl). */
  brokerRelays(): Relay[] {
    return [...this.relays.values()].filter((relay) => relay.address === this.brokerAddress);
  }

  /**
   * `url` (one or several, comma-separated) moved to `address`, through relays to where it
   * pointed; URLs of other hosts than the loopback are kept.
   */
  async moved(url: string, address: string): Promise<string> {
    const urls = await Promise.all(
      url.split(',').map(async (one) => {
        const parsed = new URL(one.trim());
        // A host of the bridge (a RabbitMQ node, the database) is reached as it is.
        if (!LOOPBACK.includes(parsed.hostname)) return one.trim();
        const fallback = parsed.protocol.startsWith('amqp')
          ? 5672
          : parsed.protocol.startsWith('mongo')
            ? 27017
            : 80;
        const port = Number(parsed.port || fallback);
        await this.relay(address, port);
        parsed.hostname = address;
        parsed.port = String(port);
        return parsed.toString();
      }),
    );
    return urls.join(',');
  }

  /**
   * A service's environment as a host sees it: AMQP_URL on the broker's address, every other
   * loopback URL on the services' address (each through a relay); URLs of hosts kept.
   */
  async envFor(env: Record<string, string>): Promise<Record<string, string>> {
    const out: Record<string, string> = { ...env };
    for (const [name, value] of Object.entries(env)) {
      if (name === 'AMQP_URL') out[name] = await this.moved(value, this.brokerAddress);
      else {
        const ports = [...value.matchAll(/(?:127\.0\.0\.1|localhost):(\d+)/g)].map((m) => Number(m[1]));
        for (const port of ports) await this.relay(this.servicesAddress, port);
        out[name] = value.replace(/(?:127\.0\.0\.1|localhost):(\d+)/g, `${this.servicesAddress}:$1`);
      }
    }
    return out;
  }

  /** A command run in `host`'s namespace (`ip netns exec`), recorded as the kit's process. */
  exec(
    host: Host,
    command: string,
    args: string[],
    env: Record<string, string | undefined>,
    lifetimeMs?: number,
  ): StartedProcess {
    return startProcess('ip', ['netns', 'exec', host.namespace, command, ...args], env, lifetimeMs);
  }

  /**
   * The service `name` (its bundle, as spawnService runs it) in `host`, with `env` as the host
   * sees it (envFor), listening on the host's address; resolves once its /readyz answers 200.
   */
  async spawnService(host: Host, name: string, env: Record<string, string>): Promise<HostedService> {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const own = {
      ...(await this.envFor(env)),
      HOST: '0.0.0.0',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
    };
    const bundle = serviceBundleCommand(name);
    const started = this.exec(host, process.execPath, bundle.args, { ...bundle.env, ...own });
    let ended = false;
    void started.exited.then(() => (ended = true));
    const metricsUrl = `http://${host.address}:${metricsPort}`;
    await waitFor(async () => ended || (await answersReady(metricsUrl)), {
      timeoutMs: CEILINGS.start,
      what: `${name} in ${host.name} to be ready`,
    }).catch((error: Error) => {
      started.child.kill('SIGKILL');
      throw error;
    });
    if (ended) {
      const result = await started.exited;
      throw new Error(`${name} in ${host.name} ended before it was ready: ${result.stderr.slice(-2000)}`);
    }
    return { ...started, url: `http://${host.address}:${port}`, metricsUrl };
  }

  /**
   * `port` on `host`'s own loopback forwarded to the same port on the root's loopback (through the
   * services' address): for addresses a service reads from its database, such as a model's
   * provider URL on 127.0.0.1. Resolves once it listens.
   */
  async loopback(host: Host, port: number): Promise<void> {
    await this.relay(this.servicesAddress, port);
    const script =
      `const net = require('net'); net.createServer((c) => { const u = net.connect(${port}, '${this.servicesAddress}');` +
      ` c.pipe(u).pipe(c); c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); })` +
      `.listen(${port}, '127.0.0.1', () => console.log('listening'));`;
    const started = this.exec(host, process.execPath, ['-e', script], {});
    await waitFor(() => started.output().includes('listening'), {
      what: `the loopback forward in ${host.name}`,
    });
  }

  /** Nemesis: `host` loses its link; every packet to and from it vanishes. */
  isolate(host: Host): void {
    ip('link', 'set', host.veth, 'down');
    this.isolated.add(host);
  }

  /**
   * Nemesis: `host` cut from `address` only (another host's, or the broker's relay):
   * packets between them vanish, unanswered, as on a silent network; every other link works.
   */
  cut(host: Host, address: string): void {
    const blackhole = (from: Host, to: string) => {
      ip('-n', from.namespace, 'neigh', 'replace', to, 'lladdr', NOWHERE, 'nud', 'permanent', 'dev', 'eth0');
      this.cuts.push({ host: from, address: to });
    };
    blackhole(host, address);
    const other = [...this.hosts.values()].find((candidate) => candidate.address === address);
    if (other) blackhole(other, host.address);
  }

  /** Nemesis: every hosts in `one` cut from every host in `other` (a split in two halves). */
  split(one: Host[], other: Host[]): void {
    for (const a of one) for (const b of other) this.cut(a, b.address);
  }

  /** Nemesis: `host`'s link loses `percent` of its packets, each way (tc, a random classic-BPF match). */
  lose(host: Host, percent: number): void {
    loseOnLink([], host.veth, sinkName(), percent);
    loseOnLink(['-n', host.namespace], 'eth0', 'sink0', percent);
    this.lossy.add(host);
  }

  /** Nemesis: the broker's link slowed by `ms` ± `jitterMs` each way (the relays', for every host and the root). */
  slowBroker(ms: number, jitterMs: number): void {
    for (const relay of this.brokerRelays()) relay.slow({ ms, jitterMs });
  }

  /** Every nemesis undone: links up, cuts and losses removed, the broker's link at full speed. */
  heal(): void {
    for (const host of this.isolated) ip('link', 'set', host.veth, 'up');
    this.isolated.clear();
    for (const { host, address } of this.cuts.splice(0))
      ipQuiet('-n', host.namespace, 'neigh', 'del', address, 'dev', 'eth0');
    for (const host of this.lossy) {
      run('tc', ['qdisc', 'del', 'dev', host.veth, 'root'], { ignore: true });
      run('tc', ['-n', host.namespace, 'qdisc', 'del', 'dev', 'eth0', 'root'], { ignore: true });
    }
    this.lossy.clear();
    for (const relay of this.relays.values()) relay.slow(undefined);
  }

  /** Removes everything: the processes in the hosts, the namespaces, the links, the relays. */
  async destroy(): Promise<void> {
    for (const host of this.hosts.values()) {
      removeNamespace(host.namespace);
      // A namespace lives on unnamed while its orphaned sockets retransmit (to a host cut off,
      // for minutes): its link goes at once, both ends with this one.
      removeLink(host.veth);
    }
    this.hosts.clear();
    removeLink(bridgeName());
    removeLink(sinkName());
    await Promise.all([...this.relays.values()].map((relay) => relay.stop()));
    this.relays.clear();
  }
}
