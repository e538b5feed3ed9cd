import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { Connection } from 'mongoose';
import { AMQP_SOCKET_OPTIONS, topologyNames } from '@pack/broker';
import { createEnvelope, events, type EventData } from '@pack/contracts';
import { publishConfirmed } from '../llm-gateway/measure';

const STAGES = ['CONFIG', 'VERIFY', 'EXECUTION'] as const;
type Stage = (typeof STAGES)[number];

interface StageDoc {
  state: string | null;
  started_at: Date | null;
  finished_at: Date | null;
}

/** Where the time of one stage went, in ms (bench clock and the orchestrator's, one machine). */
export interface StageTiming {
  stage: Stage;
  /** From the previous stage's end (CONFIG: the approval's publish) to this stage's end. */
  total: number;
  /** With the breakdown: previous end -> the generate request on the broker (orchestrator). */
  toRequest?: number;
  /** With the breakdown: request on the broker -> result on the broker (llm-gateway, provider). */
  inGateway?: number;
  /** With the breakdown: result on the broker -> the stage's end written (orchestrator). */
  toEnd?: number;
}

/**
 * Drives Service Items through the orchestrator as the catalog would: publishes an approval and
 * learns the run's start and end from its progress events (what the catalog consumes), then reads
 * the stages' ends once. With `breakdown`, the generate requests and results are watched on the
 * broker too, to tell where each stage's time went; that costs the driver two deliveries per
 * stage, CPU taken from the same 2 cores as the path it measures, so it is asked for
 * (SHOW_STAGES / BREAKDOWN), not the default. No polling.
 */
export class PipelineDriver {
  private readonly seen = new Map<string, number>();
  private readonly done = new Map<number, () => void>();
  /** Runs whose end was seen before run() waited for it. */
  private readonly ended = new Set<number>();
  /** Resolves a run() with its pipeline's id once the item's run is seen starting. */
  private readonly started = new Map<number, (pipelineId: number) => void>();
  private nextItem = 1;

  private constructor(
    private readonly connection: ChannelModel,
    private readonly channel: ConfirmChannel,
    private readonly exchange: string,
    private readonly orchestratorDb: Connection,
    private readonly serviceId: number,
    private readonly breakdown: boolean,
  ) {}

  static async start(
    amqpUrl: string,
    namespace: string,
    orchestratorDb: Connection,
    serviceId: number,
    breakdown: boolean,
  ) {
    const connection = await amqp.connect(amqpUrl, AMQP_SOCKET_OPTIONS);
    const channel = await connection.createConfirmChannel();
    const exchange = topologyNames(namespace).events;
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    if (breakdown) {
      await channel.bindQueue(queue, exchange, events.llmGenerateRequested.type);
      await channel.bindQueue(queue, exchange, events.llmGenerateCompleted.type);
    }
    // The catalog consumes a run's progress events (and without a queue bound to them each one
    // would come back unroutable: a warning per event in the orchestrator).
    await channel.bindQueue(queue, exchange, events.pipelineProgress.type);
    const driver = new PipelineDriver(connection, channel, exchange, orchestratorDb, serviceId, breakdown);
    await channel.consume(queue, (message) => message && driver.observe(message.content), { noAck: true });
    return driver;
  }

  private observe(content: Buffer): void {
    const at = performance.timeOrigin + performance.now();
    const envelope = JSON.parse(content.toString('utf8')) as {
      type: string;
      data: {
        request_id: string;
        reply_to: { pipeline_id: number; stage: Stage } | null;
        pipeline_id?: number;
        service_item_id?: number;
        state?: string;
      };
    };
    if (envelope.type === events.pipelineProgress.type) {
      const id = envelope.data.pipeline_id!;
      // A run starts with its CONFIG request and IN_PROGRESS in one write (published together).
      if (envelope.data.state === 'IN_PROGRESS') this.started.get(envelope.data.service_item_id!)?.(id);
      // The run's end is written before its progress event is published: one read then finds it.
      else if (this.done.has(id)) this.done.get(id)!();
      else this.ended.add(id);
      return;
    }
    const { request_id, reply_to } = envelope.data;
    if (!reply_to) return;
    const kind = envelope.type === events.llmGenerateRequested.type ? 'requested' : 'completed';
    if (!this.seen.has(`${kind}:${request_id}`)) this.seen.set(`${kind}:${request_id}`, at);
  }

  /** One Service Item approved and driven through its three stages; the stages' timings. */
  async run(): Promise<StageTiming[]> {
    const item = this.nextItem++;
    const started = new Promise<number>((resolve) => this.started.set(item, resolve));
    const approvedAt = performance.timeOrigin + performance.now();
    await this.publish(approval(item, this.serviceId));
    const pipelineId = await started;
    this.started.delete(item);
    // The run's end: its progress event (COMPLETED, or FAILED, which the read below reports).
    if (!this.ended.delete(pipelineId)) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve, reject) => {
        this.done.set(pipelineId, resolve);
        timer = setTimeout(() => reject(new Error(`pipeline ${pipelineId} did not end within 30 s`)), 30_000);
      }).finally(() => clearTimeout(timer));
      this.done.delete(pipelineId);
    }
    const pipeline = await this.waitUntil(async () => {
      const found = await this.orchestratorDb
        .collection<{ stages: Record<Stage, StageDoc> }>('pipelines')
        .findOne({ _id: pipelineId as never }, { projection: { stages: 1 } });
      return found?.stages.EXECUTION.state === 'OK' ? found : undefined;
    });
    let previousEnd = approvedAt;
    return STAGES.map((stage) => {
      const end = pipeline.stages[stage].finished_at!.getTime();
      const timing: StageTiming = { stage, total: end - previousEnd };
      if (this.breakdown) {
        const requestId = `pipeline-${pipelineId}-${stage}-1`;
        const requested = this.take(`requested:${requestId}`);
        const completed = this.take(`completed:${requestId}`);
        Object.assign(timing, {
          toRequest: requested - previousEnd,
          inGateway: completed - requested,
          toEnd: end - completed,
        });
      }
      previousEnd = end;
      return timing;
    });
  }

  private take(key: string): number {
    const at = this.seen.get(key);
    this.seen.delete(key);
    if (at === undefined) throw new Error(`${key} was not seen on the broker`);
    return at;
  }

  private async waitUntil<T>(probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error('a pipeline did not finish within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
  }

  private async publish(data: EventData<typeof events.changeInstanceStateChanged>): Promise<void> {
    const envelope = createEnvelope(events.changeInstanceStateChanged, data, {
      source: 'bench',
      correlationId: `bench-${data.change_instance_id}`,
    });
    await publishConfirmed(this.channel, this.exchange, envelope);
  }

  async stop(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}

/** An approval as the catalog publishes it: Service Item `item`, its first declaration. */
function approval(item: number, serviceId: number): EventData<typeof events.changeInstanceStateChanged> {
  return {
    change_instance_id: item,
    service_item_id: item,
    declaration_id: item,
    declaration_json: JSON.stringify({ size: 'large', item }),
    consumer_id: 2,
    consumer_name: 'bench consumer',
    service: { id: serviceId, name: 'Bench service', owner: { id: 1, name: 'bench' } },
    state: 'APPROVED',
    old_state: 'PENDING',
    reasons: [],
    changed_by: { kind: 'user', user_id: 1, username: 'bench' },
  };
}
