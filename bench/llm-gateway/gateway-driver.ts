import { randomUUID } from 'node:crypto';
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import { AMQP_SOCKET_OPTIONS, topologyNames } from '@pack/broker';
import { createEnvelope, events } from '@pack/contracts';
import { GENERATE_CONSUMER } from '@pack/llm-gateway';
import { publishConfirmed } from './measure';

/** Publishes generate requests as the pipeline would and resolves each call when its result arrives. */
export class GatewayDriver {
  private readonly pending = new Map<string, (ok: boolean) => void>();

  private constructor(
    private readonly connection: ChannelModel,
    private readonly channel: ConfirmChannel,
    private readonly exchange: string,
    private readonly modelId: number,
  ) {}

  static async start(amqpUrl: string, namespace: string, modelId: number): Promise<GatewayDriver> {
    const connection = await amqp.connect(amqpUrl, AMQP_SOCKET_OPTIONS);
    const channel = await connection.createConfirmChannel();
    const exchange = topologyNames(namespace).events;
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, exchange, events.llmGenerateCompleted.type);
    const driver = new GatewayDriver(connection, channel, exchange, modelId);
    await channel.consume(
      queue,
      (message) => {
        if (!message) return;
        const data = (
          JSON.parse(message.content.toString('utf8')) as { data: { request_id: string; ok: boolean } }
        ).data;
        driver.pending.get(data.request_id)?.(data.ok);
        driver.pending.delete(data.request_id);
      },
      { noAck: true },
    );
    return driver;
  }

  /** The queues the gateway declared in the bench's namespace (removed afterwards). */
  static queues(namespace: string): string[] {
    const names = topologyNames(namespace);
    return [
      names.queue(GENERATE_CONSUMER),
      names.retryQueue(GENERATE_CONSUMER),
      names.deadLetterQueue(GENERATE_CONSUMER),
    ];
  }

  /** One generation (of `modelId`, by default the driver's model): publish with a confirm, then wait for the result. */
  async call(modelId = this.modelId): Promise<void> {
    const requestId = randomUUID();
    const envelope = createEnvelope(
      events.llmGenerateRequested,
      {
        request_id: requestId,
        llm_model_id: modelId,
        messages: [{ role: 'user', content: 'Say hello.' }],
        response_schema: null,
        processor_id: null,
        reply_to: null,
      },
      { source: 'bench', correlationId: requestId },
    );
    const answered = new Promise<boolean>((resolve) => this.pending.set(requestId, resolve));
    await publishConfirmed(this.channel, this.exchange, envelope);
    if (!(await answered)) throw new Error(`request ${requestId} answered with an error result`);
  }

  async stop(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}
