import type { Channel, ChannelModel } from 'amqplib';
import type { Gauge, Metrics } from '@pack/metrics';
import { withinMs } from './confirm';
import type { ConsumerSpec } from './consumer';
import type { topologyNames } from './topology';

/** What the gauges read of the broker at scrape time. */
export interface QueueSource {
  consumers(): readonly ConsumerSpec[];
  /** The live connection, or undefined while not connected. */
  connection(): ChannelModel | undefined;
}

/**
 * `broker_queue_messages` and `broker_dead_letter_messages`: the depth of each shared consumer's
 * queue and dead-letter queue, read from RabbitMQ on each scrape through one inspection channel.
 * Every replica reports the same queues (use max by queue).
 */
export class QueueGauges {
  private inspectChannel?: Promise<Channel>;

  constructor(
    metrics: Metrics,
    private readonly names: ReturnType<typeof topologyNames>,
    private readonly source: QueueSource,
  ) {
    metrics.gauge(
      'broker_queue_messages',
      "Messages ready in a consumer's queue (backlog), read at scrape time",
      ['queue'],
      (gauge) => this.collect(gauge, (spec) => this.names.queue(spec.name)),
    );
    metrics.gauge(
      'broker_dead_letter_messages',
      "Messages in a consumer's dead-letter queue, read at scrape time",
      ['queue'],
      (gauge) => this.collect(gauge, (spec) => this.names.deadLetterQueue(spec.name)),
    );
  }

  /** The connection went away: its channel with it. */
  forgetChannel(): void {
    this.inspectChannel = undefined;
  }

  /** Sets the gauge to the depth of one queue per shared consumer, labelled by its main queue. */
  private async collect(gauge: Gauge<'queue'>, queueOf: (spec: ConsumerSpec) => string): Promise<void> {
    gauge.reset();
    const shared = this.source.consumers().filter((spec) => !spec.broadcast);
    const connection = this.source.connection();
    if (!connection || shared.length === 0) return;
    this.inspectChannel ??= connection.createChannel().then((channel) => {
      const forget = () => this.forgetChannel();
      channel.on('error', forget);
      channel.on('close', forget);
      return channel;
    });
    const inspect = this.inspectChannel;
    void inspect.catch(() => this.forgetChannel());
    await withinMs(
      (async () => {
        const channel = await inspect;
        for (const spec of shared) {
          const { messageCount } = await channel.checkQueue(queueOf(spec));
          gauge.set({ queue: this.names.queue(spec.name) }, messageCount);
        }
      })(),
      1000,
    );
  }
}
