import { existsSync } from 'node:fs';
import mongoose from 'mongoose';
import { NamespacedDatabase } from './database-host';
import { ownedNamespaces } from './leftover-networks';
import { PartitionNet, type Host } from './net';

/** What became of a TCP connect from `from` to the database's port: 'connected' or 'silent'. */
const CLIENT = (address: string) =>
  `const s = require('net').connect(27017, '${address}'); s.setTimeout(1500, () => { console.log('silent'); process.exit(); });` +
  `s.on('connect', () => { console.log('connected'); process.exit(); }); s.on('error', (e) => { console.log(e.code); process.exit(); });`;

describe('the database pair in a host of its own', () => {
  let net: PartitionNet;
  let database: NamespacedDatabase;
  let service: Host;

  const reach = async (from: Host) =>
    (await net.exec(from, process.execPath, ['-e', CLIENT(database.host.address)], {}).exited).stdout.trim();

  beforeAll(async () => {
    net = PartitionNet.create();
    database = await NamespacedDatabase.start(net);
    service = net.addHost('service');
  });
  afterAll(async () => {
    database?.stop();
    await net?.destroy();
  });

  it('keeps what the root namespace writes on its address; a host cut from it goes silent while the root still reads', async () => {
    const connection = await mongoose.createConnection(database.url, { dbName: 'harness' }).asPromise();
    try {
      await connection.db!.collection('things').insertOne({ _id: 1 as never, n: '9007199254740993' });
      expect(await reach(service)).toBe('connected');
      net.cut(service, database.host.address);
      expect(await reach(service)).toBe('silent');
      // The cut is between the two hosts only: the root still reads what it wrote.
      expect(await connection.db!.collection('things').findOne({ _id: 1 as never })).toEqual({
        _id: 1,
        n: '9007199254740993',
      });
      net.heal();
      expect(await reach(service)).toBe('connected');
    } finally {
      await connection.close();
    }
  });

  it('stops with its processes and its folder', () => {
    const { namespace } = database.host;
    expect(ownedNamespaces()).toContain(namespace);
    database.stop();
    expect(ownedNamespaces()).not.toContain(namespace);
    expect(existsSync(database.dir)).toBe(false);
  });
});
