import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CEILINGS } from './ceilings';

/** A queue's messages: ready, held unacknowledged by a consumer, and its consumers. */
export interface QueueDepth {
  messages: number;
  ready: number;
  unacknowledged: number;
  consumers: number;
}

/**
 * The queues of a broker namespace (a stack's, a harness's), as the local node's rabbitmqctl
 * lists them (the suite's broker is this machine's, scripts/infra.sh). Run asynchronously: the stack's
 * services and the partition relays share this process, and a synchronous child would stop them
 * for the seconds rabbitmqctl takes (publishes then miss their confirms).
 */
export async function queueDepths(namespace: string): Promise<Map<string, QueueDepth>> {
  const columns = ['name', 'messages', 'messages_ready', 'messages_unacknowledged', 'consumers'];
  const listed = await promisify(execFile)(
    'rabbitmqctl',
    ['-q', '--no-table-headers', 'list_queues', ...columns],
    {
      encoding: 'utf8',
      timeout: CEILINGS.wait,
    },
  );
  const depths = new Map<string, QueueDepth>();
  for (const line of listed.stdout.split('\n')) {
    const [name, messages, ready, unacknowledged, consumers] = line.trim().split(/\s+/);
    if (name?.startsWith(`${namespace}.`))
      depths.set(name, {
        messages: Number(messages),
        ready: Number(ready),
        unacknowledged: Number(unacknowledged),
        consumers: Number(consumers),
      });
  }
  return depths;
}
