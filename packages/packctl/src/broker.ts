/** RabbitMQ as packctl sees it: queue depths with checkQueue (no management plugin needed). */
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { CliError } from './cli';

export interface QueueDepth {
  messages: number;
  consumers: number;
}

/** A connection for one command; checkQueue on a missing queue closes the channel, so it is renewed. */
export class BrokerSession {
  private channel?: Promise<Channel>;

  private constructor(readonly connection: ChannelModel) {}

  /** `url`: one, or a cluster's nodes separated by commas; the first that answers is used. */
  static async open(url: string): Promise<BrokerSession> {
    let lastError: unknown;
    for (const candidate of url
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)) {
      try {
        const connection = await amqp.connect(candidate, { timeout: 5000 });
        connection.on('error', () => undefined);
        return new BrokerSession(connection);
      } catch (error) {
        lastError = error;
      }
    }
    throw new CliError(`cannot reach RabbitMQ at ${redact(url)}: ${(lastError as Error).message}`);
  }

  private async plain(): Promise<Channel> {
    this.channel ??= this.connection.createChannel().then((channel) => {
      channel.on('error', () => undefined);
      channel.on('close', () => (this.channel = undefined));
      return channel;
    });
    return this.channel;
  }

  /** The queue's ready messages and consumers, or undefined when it does not exist. */
  async depth(queue: string): Promise<QueueDepth | undefined> {
    try {
      const { messageCount, consumerCount } = await (await this.plain()).checkQueue(queue);
      return { messages: messageCount, consumers: consumerCount };
    } catch {
      this.channel = undefined;
      return undefined;
    }
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}

/** `pack.catalog.x` or `pack.catalog.x.dlq` -> the consumer's queue and its dead-letter queue. */
export function queuePair(name: string): { queue: string; deadLetters: string } {
  const queue = name.replace(/\.dlq$/, '');
  return { queue, deadLetters: `${queue}.dlq` };
}
