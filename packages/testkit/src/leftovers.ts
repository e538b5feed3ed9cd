import { spawnSync } from 'node:child_process';
import { connectAny } from '@pack/broker';
import mongoose from 'mongoose';
import { CEILINGS } from './ceilings';
import { processRecordsDir, removeLeftoverDirs, removeStrayProcesses } from './leftover-files';
import { isAlive, isLeftover, nameOrigin } from './owner';

/**
 * What earlier runs left behind, found and removed when a run starts (global-setup.ts): their
 * databases on MONGO_URL, their exchanges and queues on AMQP_URL, the processes they started and
 * their folders. Only what the kit made (uniqueName's names, its process records, its folders)
 * and only of owners that are gone: a jest running next to this one, on the same servers, keeps
 * everything it uses.
 */
export interface RemovedLeftovers {
  databases: string[];
  exchanges: string[];
  queues: string[];
  processes: number[];
  dirs: string[];
}

export interface LeftoverOptions {
  mongoUrl: string;
  amqpUrl: string;
  now?: number;
  alive?: (pid: number) => boolean;
  /** The folder of the process records and temporary folders (the system's temporary folder). */
  tmp?: string;
}

const leftover = (now: number, alive: (pid: number) => boolean) => (name: string) => {
  const origin = nameOrigin(name);
  return origin !== undefined && isLeftover(origin, now, alive);
};

async function removeDatabases(mongoUrl: string, isOurs: (name: string) => boolean): Promise<string[]> {
  const connection = await mongoose
    .createConnection(mongoUrl, { serverSelectionTimeoutMS: CEILINGS.wait })
    .asPromise();
  try {
    const { databases } = await connection.db!.admin().listDatabases({ nameOnly: true });
    const removed = databases.map((database) => database.name).filter(isOurs);
    for (const name of removed) await connection.useDb(name, { useCache: false }).dropDatabase();
    return removed;
  } finally {
    await connection.close();
  }
}

/**
 * The broker's exchange and queue names. AMQP cannot list them: the management API can, where
 * it is enabled, and rabbitmqctl for the local node scripts/infra.sh starts; elsewhere (a
 * container of a run's own, fresh each time) there is nothing to list.
 */
export async function brokerNames(amqpUrl: string): Promise<{ exchanges: string[]; queues: string[] }> {
  const url = new URL(amqpUrl.split(',')[0]!.trim());
  const management = async (kind: string) => {
    const auth = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`);
    const answer = await fetch(`http://${url.hostname}:15672/api/${kind}/%2F?columns=name`, {
      headers: { authorization: `Basic ${auth.toString('base64')}` },
      // A probe: where nothing listens there it fails at once, elsewhere within this.
      signal: AbortSignal.timeout(5000),
    });
    if (!answer.ok) throw new Error(`management API: ${answer.status}`);
    return ((await answer.json()) as { name: string }[]).map((entry) => entry.name);
  };
  try {
    return { exchanges: await management('exchanges'), queues: await management('queues') };
  } catch {
    // not enabled: the local node's rabbitmqctl below
  }
  const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) && (url.port || '5672') === '5672';
  const ctl = (kind: string) => {
    if (!local) return [];
    const listed = spawnSync('rabbitmqctl', ['-q', '--no-table-headers', `list_${kind}`, 'name'], {
      encoding: 'utf8',
      timeout: CEILINGS.wait,
    });
    return listed.status === 0 ? listed.stdout.split('\n').map((line) => line.trim()) : [];
  };
  return { exchanges: ctl('exchanges'), queues: ctl('queues') };
}

/** An exchange's or queue's namespace: the name up to its first dot (topologyNames of @pack/broker). */
const namespaceOf = (name: string) => name.split('.')[0]!;

async function removeBrokerNames(
  amqpUrl: string,
  isOurs: (name: string) => boolean,
): Promise<{ exchanges: string[]; queues: string[] }> {
  const listed = await brokerNames(amqpUrl);
  const queues = listed.queues.filter((name) => isOurs(namespaceOf(name)));
  const exchanges = listed.exchanges.filter((name) => isOurs(namespaceOf(name)));
  if (queues.length + exchanges.length === 0) return { exchanges, queues };
  const connection = await connectAny(amqpUrl);
  // A queue still held by a live connection (an exclusive one) refuses with a channel error,
  // which the connection emits too: the name is left, the run goes on.
  connection.on('error', () => undefined);
  try {
    let channel = await connection.createChannel();
    const each = async (names: string[], remove: (name: string) => Promise<unknown>) => {
      for (const name of names)
        // A failed operation closes the channel: the next name gets a fresh one.
        await remove(name).catch(async () => (channel = await connection.createChannel()));
    };
    await each(queues, (name) => channel.deleteQueue(name));
    await each(exchanges, (name) => channel.deleteExchange(name));
    await channel.close().catch(() => undefined);
  } finally {
    await connection.close();
  }
  return { exchanges, queues };
}

/** Finds and removes what earlier runs left behind; returns what it removed. */
export async function removeLeftovers(options: LeftoverOptions): Promise<RemovedLeftovers> {
  const now = options.now ?? Date.now();
  const alive = options.alive ?? isAlive;
  const isOurs = leftover(now, alive);
  const processes = removeStrayProcesses(processRecordsDir(options.tmp), alive);
  const dirs = removeLeftoverDirs(options.tmp, now, alive);
  const databases = await removeDatabases(options.mongoUrl, isOurs);
  const { exchanges, queues } = await removeBrokerNames(options.amqpUrl, isOurs);
  return { databases, exchanges, queues, processes, dirs };
}
