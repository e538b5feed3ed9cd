import { events, type EventData } from '@pack/contracts';
import { EventTap, publishEvent, type TappedEvent } from '@pack/testkit';
import { owner, type OrchestratorHarness } from './harness';

export type GenerateRequest = EventData<typeof events.llmGenerateRequested>;
type Approval = EventData<typeof events.changeInstanceStateChanged>;
type Completed = EventData<typeof events.llmGenerateCompleted>;
type Created = EventData<typeof events.changeInstanceCreated>;

export const PACK = '/v1/external/serviceowner/pack/';

/** An approval as the catalog publishes it. */
export function approval(item: number, changeInstance: number, declaration: object, service = 1): Approval {
  return {
    change_instance_id: changeInstance,
    service_item_id: item,
    declaration_id: changeInstance,
    declaration_json: JSON.stringify(declaration),
    consumer_id: 20,
    consumer_name: 'carla',
    service: { id: service, name: `Service ${service}`, owner: { id: owner.id, name: owner.username } },
    state: 'APPROVED',
    old_state: 'PENDING',
    reasons: [],
    changed_by: { kind: 'user', user_id: owner.id, username: owner.username },
  };
}

/** A creation as the catalog publishes it (PENDING, or APPROVED when auto-approved). */
export function creation(
  changeInstance: number,
  service: number,
  declaration: object,
  autoApproved = false,
): Created {
  const {
    old_state: _old,
    reasons: _reasons,
    changed_by: _by,
    ...fields
  } = approval(changeInstance + 1, changeInstance, declaration, service);
  return { ...fields, state: autoApproved ? 'APPROVED' : 'PENDING', auto_approved: autoApproved };
}

/** The llm-gateway's successful result for a request, with `over` changed. */
export function generateResult(request: GenerateRequest, over: Partial<Completed> = {}): Completed {
  return {
    request_id: request.request_id,
    llm_model_id: request.llm_model_id,
    processor_id: request.processor_id,
    reply_to: request.reply_to,
    ok: true,
    output: null,
    parsed_json: null,
    usage: { input_tokens: 10, output_tokens: 5 },
    cost: null,
    unpriced: false,
    mode: 'native',
    attempts: 1,
    latency_ms: 3,
    error: null,
    ...over,
  };
}

/**
 * Plays the catalog and the llm-gateway around one orchestrator: publishes approvals, watches the
 * generate requests it sends and answers them as the llm-gateway would.
 */
export class PipelineDriver {
  private constructor(
    private readonly orchestrator: OrchestratorHarness,
    readonly tap: EventTap,
  ) {}

  static async start(orchestrator: OrchestratorHarness, patterns: string[] = []): Promise<PipelineDriver> {
    const tap = await EventTap.start(process.env.AMQP_URL!, orchestrator.env.BROKER_NAMESPACE!, [
      events.llmGenerateRequested.type,
      ...patterns,
    ]);
    return new PipelineDriver(orchestrator, tap);
  }

  publish<D extends Parameters<typeof publishEvent>[2]>(definition: D, data: EventData<D>): Promise<string> {
    return publishEvent(process.env.AMQP_URL!, this.orchestrator.env.BROKER_NAMESPACE!, definition, data);
  }

  approve(item: number, changeInstance: number, declaration: object, service = 1): Promise<string> {
    return this.publish(
      events.changeInstanceStateChanged,
      approval(item, changeInstance, declaration, service),
    );
  }

  /** The request of a pipeline's stage at an attempt (waits for it). */
  async request(pipelineId: number, stage: string, attempt = 1): Promise<GenerateRequest> {
    const found = (all: TappedEvent[]) =>
      all.find(
        (event) =>
          (event.data as GenerateRequest).request_id === `pipeline-${pipelineId}-${stage}-${attempt}`,
      );
    return found(
      await this.tap.waitFor((all) => found(all) !== undefined, `${stage} of pipeline ${pipelineId}`),
    )!.data as GenerateRequest;
  }

  /** The generate request with this id (waits for it). */
  async requestById(id: string): Promise<GenerateRequest> {
    const find = (all: TappedEvent[]) =>
      all.find((event) => (event.data as GenerateRequest).request_id === id);
    return find(await this.tap.waitFor((all) => find(all) !== undefined, id))!.data as GenerateRequest;
  }

  /** The Pack Optimizer's request on a finished pipeline (waits for it). */
  async optimizerRequest(pipelineId: number): Promise<GenerateRequest> {
    const mine = (event: TappedEvent) =>
      String((event.data as GenerateRequest).request_id).startsWith(`optimizer-${pipelineId}-`);
    return (await this.tap.waitFor((all) => all.some(mine), 'the optimizer request')).find(mine)!
      .data as GenerateRequest;
  }

  /** The validation decisions published so far on one Change Instance. */
  async decisions(changeInstance: number): Promise<TappedEvent[]> {
    return (await this.tap.drain()).filter(
      (event) =>
        event.type === events.changeInstanceValidationDecided.type &&
        (event.data as { change_instance_id: number }).change_instance_id === changeInstance,
    );
  }

  /** Answers a request as the llm-gateway publishes its result. */
  answer(request: GenerateRequest, over: Partial<Completed> = {}): Promise<string> {
    return this.publish(events.llmGenerateCompleted, generateResult(request, over));
  }

  stop(): Promise<void> {
    return this.tap.stop();
  }
}
