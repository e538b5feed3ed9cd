/** What the soak reads from the outside at warm-up and at the end: collections and queues. */
import { execFileSync } from 'node:child_process';
import { SERVICES, type Fleet } from '../crash-scenario/fleet';

export interface CollectionSize {
  documents: number;
  bytes: number;
}

/** Documents and bytes of every collection of every service, by "service.collection". */
export async function collectionSizes(fleet: Fleet): Promise<Map<string, CollectionSize>> {
  const sizes = new Map<string, CollectionSize>();
  for (const service of SERVICES) {
    const db = await fleet.database(service);
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      const stats = (await db.command({ collStats: name }).catch(() => ({}))) as {
        count?: number;
        size?: number;
      };
      const documents = stats.count ?? (await db.collection(name).estimatedDocumentCount());
      sizes.set(`${service}.${name}`, { documents, bytes: stats.size ?? 0 });
    }
  }
  return sizes;
}

/** Messages ready or unacknowledged in each queue of the fleet's namespace (rabbitmqctl). */
export function queueDepths(namespace: string): Map<string, number> {
  const depths = new Map<string, number>();
  try {
    const lines = execFileSync('rabbitmqctl', ['-q', 'list_queues', 'name', 'messages'], {
      encoding: 'utf8',
      timeout: 60_000,
    }).split('\n');
    for (const line of lines) {
      const [name, messages] = line.trim().split(/\s+/);
      if (name?.startsWith(`${namespace}.`)) depths.set(name.slice(namespace.length + 1), Number(messages));
    }
  } catch {
    process.stderr.write('[soak] rabbitmqctl list_queues failed: queue depths unknown\n');
  }
  return depths;
}
