/** `packctl dlq list|replay <queue>`: a consumer's dead-lettered messages, read and sent back. */
import type { GetMessage } from 'amqplib';
import { BrokerSession, queuePair } from './broker';
import { CliError, EXIT, table, type Command, type Context } from './cli';

/** Headers RabbitMQ and our retry logic add; a replayed message starts afresh without them. */
const DEATH_HEADERS = /^(x-death|x-first-death-.*|x-last-death-.*|x-retry-count|x-delivery-count)$/;

async function withQueues<T>(
  context: Context,
  name: string,
  use: (session: BrokerSession, names: ReturnType<typeof queuePair>) => Promise<T>,
): Promise<T> {
  const names = queuePair(name);
  const session = await BrokerSession.open(context.amqpUrl);
  try {
    for (const queue of [names.queue, names.deadLetters])
      if (!(await session.depth(queue))) throw new CliError(`no queue ${queue} on this broker`);
    return await use(session, names);
  } finally {
    await session.close();
  }
}

function describe(message: GetMessage) {
  const headers = (message.properties.headers ?? {}) as Record<string, unknown>;
  const death = (headers['x-death'] as { reason?: string; count?: number }[] | undefined)?.[0];
  const body = message.content.toString('utf8');
  let type = message.properties.type as string | undefined;
  let id = message.properties.messageId as string | undefined;
  try {
    const envelope = JSON.parse(body) as { type?: unknown; id?: unknown };
    if (typeof envelope.type === 'string') type ??= envelope.type;
    if (typeof envelope.id === 'string') id ??= envelope.id;
  } catch {
    // not JSON: the body excerpt shows what it is
  }
  return {
    id: id ?? '-',
    type: type ?? '-',
    reason: (headers['x-first-death-reason'] as string | undefined) ?? death?.reason ?? '-',
    attempts: Number(headers['x-retry-count'] ?? 0) + 1,
    body: body.length > 120 ? `${body.slice(0, 117)}...` : body,
  };
}

export const dlqList: Command = {
  usage: 'dlq list <queue>',
  summary: "show a consumer queue's dead-lettered messages without removing them",
  details: ['<queue> is the consumer queue (pack.catalog.validation-decisions) or its .dlq.'],
  positionals: 1,
  async run(context, [name]) {
    return withQueues(context, name!, async (session, { deadLetters }) => {
      // Fetched unacknowledged, then returned to the queue when the channel closes.
      const channel = await session.connection.createChannel();
      const messages: GetMessage[] = [];
      try {
        for (let i = 0; i < context.limit; i += 1) {
          const message = await channel.get(deadLetters, { noAck: false });
          if (!message) break;
          messages.push(message);
        }
      } finally {
        await channel.close().catch(() => undefined);
      }
      const rows = messages.map(describe);
      if (context.json) context.out(JSON.stringify(rows));
      else {
        context.out(
          table(
            ['EVENT ID', 'TYPE', 'REASON', 'ATTEMPTS', 'BODY'],
            rows.map((r) => [r.id, r.type, r.reason, r.attempts, r.body]),
          ),
        );
        context.err(`${rows.length} message(s) in ${deadLetters}`);
      }
      return EXIT.ok;
    });
  },
};

export const dlqReplay: Command = {
  usage: 'dlq replay <queue>',
  summary: "send a queue's dead-lettered messages back to it (at most --limit), once the cause is fixed",
  details: [
    'Each message is republished to the consumer queue with a broker confirm, then removed from',
    'the dead-letter queue; consumers are idempotent by event id, so a copy already handled is skipped.',
    'A message that fails again is dead-lettered again (and not replayed twice by one run: only',
    'the messages there when the command starts are taken).',
  ],
  positionals: 1,
  async run(context, [name]) {
    return withQueues(context, name!, async (session, { queue, deadLetters }) => {
      // A message that fails again returns to the tail while this runs: count first, take only those.
      const waiting = (await session.depth(deadLetters))?.messages ?? 0;
      const channel = await session.connection.createConfirmChannel();
      let replayed = 0;
      try {
        for (; replayed < Math.min(waiting, context.limit); replayed += 1) {
          const message = await channel.get(deadLetters, { noAck: false });
          if (!message) break;
          const { properties } = message;
          const headers = Object.fromEntries(
            Object.entries((properties.headers ?? {}) as Record<string, unknown>).filter(
              ([key]) => !DEATH_HEADERS.test(key),
            ),
          );
          await new Promise<void>((resolve, reject) =>
            channel.sendToQueue(
              queue,
              message.content,
              {
                persistent: true,
                messageId: properties.messageId as string | undefined,
                type: properties.type as string | undefined,
                contentType: properties.contentType as string | undefined,
                timestamp: properties.timestamp as number | undefined,
                appId: properties.appId as string | undefined,
                headers,
              },
              (error: unknown) =>
                error ? reject(new CliError(`the broker refused message ${replayed + 1}`)) : resolve(),
            ),
          );
          channel.ack(message);
        }
      } finally {
        await channel.close().catch(() => undefined);
      }
      context.out(`replayed ${replayed} message(s) from ${deadLetters} to ${queue}`);
      return EXIT.ok;
    });
  },
};
