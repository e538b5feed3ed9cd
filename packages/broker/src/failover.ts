import amqp, { type ChannelModel, type ConfirmChannel, type ConsumeMessage, type Options } from 'amqplib';
import type { Logger } from '@pack/logging';
import type { topologyNames } from './topology';
import { resetWhenSilent } from './silent-node';

/**
 * The broker's address: one URL, or several separated by commas (the nodes of a RabbitMQ
 * cluster, when no load balancer or Kubernetes Service stands in front of them). Blank entries
 * are ignored. Credentials and options belong to each URL.
 */
export function brokerUrls(url: string): string[] {
  const urls = url
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (urls.length === 0) throw new Error('broker URL is empty');
  return urls;
}

/**
 * The URLs a client tries in turn: each connect attempt takes the next one, so a node that is
 * gone costs one failed attempt and the next goes to another node. The first is chosen at random
 * (unless `first` is given), which spreads replicas' connections over the nodes as a Service would.
 */
export class UrlRotation {
  private readonly urls: string[];
  private next: number;

  constructor(url: string, first?: number) {
    this.urls = brokerUrls(url);
    this.next = (first ?? Math.floor(Math.random() * this.urls.length)) % this.urls.length;
  }

  /** The URL for this attempt; the following call returns the one after it. */
  take(): string {
    const url = this.urls[this.next]!;
    this.next = (this.next + 1) % this.urls.length;
    return url;
  }

  get size(): number {
    return this.urls.length;
  }
}

/**
 * A connection to the first of the URLs (one, or several separated by commas) that answers, for
 * short-lived tools and tests; throws the last error when none does. Like the services' own, it
 * resets its socket when its heartbeat fails (silent-node.ts), so a node cut off keeps no socket,
 * and no process, alive after the connection is given up.
 */
export async function connectAny(
  url: string,
  socketOptions?: Options.Connect & object,
): Promise<ChannelModel> {
  let lastError: unknown;
  for (const candidate of brokerUrls(url)) {
    try {
      const connection = await amqp.connect(candidate, socketOptions);
      resetWhenSilent(connection);
      return connection;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/**
 * The AMQP heartbeat the services ask for. amqplib gives a silent peer up after two intervals
 * without a byte, checked once an interval: 10-15 s with 5 s (13.5 s measured with a cluster
 * node cut off, decision 0061), where 10 s took 20-33 s. Shorter ones fire on a loaded machine
 * whose event loop stalls for two intervals; RabbitMQ advises 5 s at least.
 */
export const DEFAULT_HEARTBEAT_SECONDS = 5;

/**
 * The URL with a `heartbeat` (seconds) unless it names one: without it amqplib takes the server's
 * 60 s, and a node that vanishes from the network (no socket reset) goes unnoticed for two
 * minutes.
 */
export function withHeartbeat(url: string, seconds = DEFAULT_HEARTBEAT_SECONDS): string {
  if (/[?&]heartbeat=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}heartbeat=${seconds}`;
}

/** The URL without its credentials, for logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//');
}

/**
 * A confirm channel for publishing, with the exchanges declared. `onClose` runs when it closes
 * (the Publisher decides whether the connection starts over).
 */
export async function openPublishChannel(
  connection: ChannelModel,
  names: ReturnType<typeof topologyNames>,
  log: Logger,
  onClose: (channel: ConfirmChannel) => void,
): Promise<ConfirmChannel> {
  const channel = await connection.createConfirmChannel();
  channel.on('error', (error: unknown) => log.warn({ err: error }, 'broker publish channel error'));
  channel.on('close', () => onClose(channel));
  // A mandatory publish that no queue is bound to: nobody will ever see this event.
  channel.on('return', (message: ConsumeMessage) => {
    log.warn(
      {
        type: message.properties.type as unknown,
        routing_key: message.fields.routingKey,
        event_id: message.properties.messageId as unknown,
      },
      'event was not routed to any queue',
    );
  });
  await channel.assertExchange(names.events, 'topic', { durable: true });
  await channel.assertExchange(names.deadLetters, 'direct', { durable: true });
  return channel;
}
