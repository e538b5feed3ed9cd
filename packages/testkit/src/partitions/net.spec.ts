import { ownedLinks, ownedNamespaces, removeLeftoverNetworks } from './leftover-networks';
import { PartitionNet, type Host } from './net';

/** A TCP server in a host (answers "hi"), and a client that says what became of a connect. */
const SERVER = `require('net').createServer((s) => s.end('hi')).listen(7000, '0.0.0.0')`;
const CLIENT = (address: string) =>
  `const s = require('net').connect(7000, '${address}'); s.setTimeout(1500, () => { console.log('silent'); process.exit(); });` +
  `s.on('data', () => { console.log('answered'); process.exit(); }); s.on('error', (e) => { console.log(e.code); process.exit(); });`;

describe('the partition harness where namespaces cannot be made', () => {
  it('fails and says why and how to run it, never skips', () => {
    const uid = jest.spyOn(process, 'getuid').mockReturnValue(1000);
    try {
      expect(() => PartitionNet.create()).toThrow(
        /cannot run here: this process is not root .*sudo -E npx jest/,
      );
    } finally {
      uid.mockRestore();
    }
  });
});

describe('the partition harness', () => {
  let net: PartitionNet;
  let a: Host;
  let b: Host;

  const reach = async (from: Host, to: Host) =>
    (await net.exec(from, process.execPath, ['-e', CLIENT(to.address)], {}).exited).stdout.trim();

  beforeAll(async () => {
    net = PartitionNet.create();
    a = net.addHost('a');
    b = net.addHost('b');
    for (const host of [a, b]) net.exec(host, process.execPath, ['-e', SERVER], {});
    // The servers listen within moments: a connect answered says so.
    for (let i = 0; i < 50 && (await reach(a, b)) !== 'answered'; i++);
  });
  afterAll(async () => {
    await net?.destroy();
  });

  it('hosts reach each other on their addresses; a cut from one host is silent, the rest still answers', async () => {
    expect([await reach(a, b), await reach(b, a)]).toEqual(['answered', 'answered']);
    net.cut(a, b.address);
    expect([await reach(a, b), await reach(b, a)]).toEqual(['silent', 'silent']);
    net.heal();
    expect([await reach(a, b), await reach(b, a)]).toEqual(['answered', 'answered']);
  });

  it('an isolated host reaches nobody until the heal', async () => {
    net.isolate(b);
    expect([await reach(a, b), await reach(b, a)]).toEqual(['silent', 'silent']);
    net.heal();
    expect([await reach(a, b), await reach(b, a)]).toEqual(['answered', 'answered']);
  });

  it('a link losing every packet is silent; healed, it answers', async () => {
    net.lose(b, 100);
    expect(await reach(a, b)).toBe('silent');
    net.heal();
    expect(await reach(a, b)).toBe('answered');
  });

  it("a killed run's namespaces, links and processes are removed; a live run's are kept", async () => {
    const mine = ownedNamespaces().filter((name) => name.includes(process.pid.toString(16)));
    expect(mine).toHaveLength(2);
    expect(removeLeftoverNetworks()).toEqual({ namespaces: [], links: [], processes: [] });
    // As a later run finds them once this process is gone.
    const removed = removeLeftoverNetworks((pid) => pid !== process.pid);
    expect(removed.namespaces.sort()).toEqual(mine.sort());
    expect(removed.processes).toHaveLength(2);
    expect(removed.links.length).toBeGreaterThanOrEqual(2);
    const pid = process.pid.toString(16).padStart(8, '0');
    expect(ownedNamespaces().filter((name) => name.includes(pid))).toEqual([]);
    expect(ownedLinks().filter((name) => name.includes(pid))).toEqual([]);
  });
});
