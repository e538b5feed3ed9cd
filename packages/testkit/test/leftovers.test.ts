import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import amqp from 'amqplib';
import mongoose from 'mongoose';
import {
  brokerNames,
  dropDatabase,
  fakeDate,
  isAlive,
  isLeftover,
  nameOrigin,
  ownedTempDir,
  recordProcess,
  removeLeftovers,
  uniqueName,
  waitFor,
} from '../src';

/** The pid of a process that has ended: an owner that is gone. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

const sleeper = () => spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });

async function databaseNames(mongo: mongoose.Connection): Promise<string[]> {
  const { databases } = await mongo.db!.admin().listDatabases({ nameOnly: true });
  return databases.map((database) => database.name);
}

describe('leftovers of killed runs, removed when a run starts', () => {
  const mongoUrl = process.env.MONGO_URL!;
  const amqpUrl = process.env.AMQP_URL!;
  let tmp: string;
  let mongo: mongoose.Connection;
  let broker: amqp.ChannelModel;
  const children: ReturnType<typeof sleeper>[] = [];

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'leftovers-test-'));
    mongo = await mongoose.createConnection(mongoUrl).asPromise();
    broker = await amqp.connect(amqpUrl);
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await broker?.close();
    await mongo?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("removes the databases, exchanges, queues, processes and folders of an owner that is gone, and keeps a live owner's", async () => {
    const gone = await deadPid();
    const [goneDb, liveDb] = [uniqueName('t_leftover', gone), uniqueName('t_leftover')];
    const [goneNs, liveNs] = [uniqueName('t', gone), uniqueName('t')];
    for (const name of [goneDb, liveDb]) await mongo.useDb(name).collection('things').insertOne({ n: 1 });
    const channel = await broker.createChannel();
    for (const ns of [goneNs, liveNs]) {
      await channel.assertExchange(`${ns}.events`, 'topic', { durable: true });
      await channel.assertQueue(`${ns}.catalog`, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    }
    const stray = sleeper();
    const kept = sleeper();
    children.push(stray, kept);
    const records = path.join(tmp, 'pack-test-processes');
    recordProcess(stray, records, gone);
    recordProcess(kept, records);
    const goneDir = ownedTempDir('scan', tmp, gone);
    const liveDir = ownedTempDir('scan', tmp);
    const listable = (await brokerNames(amqpUrl)).queues.includes(`${liveNs}.catalog`);

    // Ten minutes on: a dead owner's things are past the few minutes they are given.
    const removed = await removeLeftovers({ mongoUrl, amqpUrl, tmp, now: Date.now() + 10 * 60_000 });

    expect(removed.databases).toContain(goneDb);
    expect(await databaseNames(mongo)).toEqual(expect.arrayContaining([liveDb]));
    expect(await databaseNames(mongo)).not.toContain(goneDb);
    expect(removed.processes).toEqual([stray.pid]);
    await waitFor(() => !isAlive(stray.pid!), { what: 'the stray process to end' });
    expect(isAlive(kept.pid!)).toBe(true);
    expect([existsSync(goneDir), existsSync(liveDir)]).toEqual([false, true]);
    if (listable) {
      // The local node (scripts/infra.sh) or a management API: the broker's names can be listed.
      expect(removed.queues).toContain(`${goneNs}.catalog`);
      expect(removed.exchanges).toContain(`${goneNs}.events`);
      const names = await brokerNames(amqpUrl);
      expect(names.queues).toContain(`${liveNs}.catalog`);
      expect(names.queues).not.toContain(`${goneNs}.catalog`);
      expect(names.exchanges).toContain(`${liveNs}.events`);
      expect(names.exchanges).not.toContain(`${goneNs}.events`);
    } else {
      expect(removed.queues.filter((name) => name.startsWith(liveNs))).toEqual([]);
    }

    const again = await broker.createChannel();
    await again.deleteQueue(`${liveNs}.catalog`);
    await again.deleteExchange(`${liveNs}.events`);
    await again.close();
    await dropDatabase(mongoUrl, liveDb);
  });

  it('leaves names of other forms alone, and a dead owner’s things of the last few minutes', async () => {
    const gone = await deadPid();
    const recent = uniqueName('t_leftover', gone);
    const foreign = `pack_leftover_${Date.now().toString(16)}`;
    for (const name of [recent, foreign]) await mongo.useDb(name).collection('things').insertOne({ n: 1 });

    const removed = await removeLeftovers({ mongoUrl, amqpUrl, tmp });

    expect(removed.databases).not.toContain(recent);
    expect(removed.databases).not.toContain(foreign);
    expect(await databaseNames(mongo)).toEqual(expect.arrayContaining([recent, foreign]));
    await dropDatabase(mongoUrl, recent);
    await dropDatabase(mongoUrl, foreign);
  });

  it("stamps a name with the machine's time while a test fakes the date, so no other run takes it for a day-old leftover", () => {
    fakeDate(new Date('2026-03-14T12:00:05Z'));
    let name: string;
    try {
      name = uniqueName('t');
    } finally {
      jest.useRealTimers();
    }
    const origin = nameOrigin(name)!;
    expect(Math.abs(origin.createdAt - Date.now())).toBeLessThan(60_000);
    expect(isLeftover(origin)).toBe(false);
  });

  it('goes on past a queue that a live connection holds exclusively, and leaves it', async () => {
    const gone = await deadPid();
    const ns = uniqueName('t', gone);
    const holder = await broker.createChannel();
    await holder.assertQueue(`${ns}.settings-cache`, { exclusive: true });
    await holder.assertQueue(`${ns}.catalog`, { durable: true });
    const listable = (await brokerNames(amqpUrl)).queues.includes(`${ns}.catalog`);

    const removed = await removeLeftovers({ mongoUrl, amqpUrl, tmp, now: Date.now() + 10 * 60_000 });

    if (listable) {
      expect(removed.queues).toEqual(expect.arrayContaining([`${ns}.catalog`, `${ns}.settings-cache`]));
      expect((await brokerNames(amqpUrl)).queues).toContain(`${ns}.settings-cache`);
    }
    await holder.close();
  });
});
