import {
  createEnvelope,
  events,
  STAGES,
  type Envelope,
  type GenerateReplyKind,
  type JsonSchema,
  type Stage,
} from '@pack/contracts';
import { carrierOf, context, contextOf, startSpan, trace, type TraceCarrier } from '@pack/tracing';
import { finalSchema, type FinalSchema } from './final-schema';
import type { ProcessorRecord } from '../records/processor-records';
import {
  replacedAttemptCleared,
  type PipelineRecord,
  type ServiceItemRecord,
  type StageRecord,
} from '../records/pipeline-records';

import { SOURCE } from '../records/source';

export function requestIdOf(pipelineId: number, stage: Stage, attempt: number): string {
  return `pipeline-${pipelineId}-${stage}-${attempt}`;
}

/** The attempt a request id of this pipeline's stage names (requestIdOf's inverse), else null. */
export function attemptOf(requestId: string, pipelineId: number, stage: Stage): number | null {
  const prefix = `pipeline-${pipelineId}-${stage}-`;
  if (!requestId.startsWith(prefix)) return null;
  const suffix = requestId.slice(prefix.length);
  const attempt = Number(suffix);
  // Exactly as requestIdOf writes it ("01" is no attempt): the count is keyed by the id.
  return Number.isInteger(attempt) && attempt > 0 && String(attempt) === suffix ? attempt : null;
}

/**
 * The user message of a stage: the declaration the pipeline runs on and the PackData of the
 * stages before it. The model's own system prompt is added by the llm-gateway (generate-call.ts),
 * so it is not repeated here.
 */
export function stagePrompt(pipeline: PipelineRecord, stage: Stage): string {
  const parts = [
    `Latest approved declaration of Service Item ${pipeline.service_item_id}:\n${pipeline.declaration_json}`,
  ];
  for (const earlier of STAGES.slice(0, STAGES.indexOf(stage))) {
    const data = pipeline.stages[earlier].pack_data_json;
    if (data !== null) parts.push(`PackData of the ${earlier} stage:\n${data}`);
  }
  return parts.join('\n\n');
}

/**
 * A generate request of a processor: its prompt as the system message, then `user` messages.
 * `replyKind` names the result's event type, so it reaches only the queue of its kind
 * (docs/decisions/0036); a stage's result also carries `replyTo`.
 */
export function generateRequest(request: {
  requestId: string;
  processor: ProcessorRecord;
  user: string[];
  schema: JsonSchema | null;
  replyKind: GenerateReplyKind;
  replyTo?: { pipeline_id: number; stage: Stage; run: number; service_id: number };
  correlationId: string;
  /** A copy sent again by the sweeper: the same request id, its own envelope id. */
  resend?: number;
}): Envelope {
  return createEnvelope(
    events.llmGenerateRequested,
    {
      request_id: request.requestId,
      llm_model_id: request.processor.llm_model_id,
      messages: [
        { role: 'system', content: request.processor.prompt },
        ...request.user.map((content) => ({ role: 'user' as const, content })),
      ],
      response_schema: request.schema === null ? null : JSON.stringify(request.schema),
      processor_id: request.processor._id,
      reply_to: request.replyTo ?? null,
      reply_kind: request.replyKind,
    },
    {
      source: SOURCE,
      correlationId: request.correlationId,
      id: `generate-${request.requestId}${request.resend ? `-resend-${request.resend}` : ''}`,
    },
  );
}

export interface ScheduledStage {
  fields: Partial<StageRecord>;
  event: Envelope;
}

/**
 * The stage's move to SCHEDULED and its generate request, written together (the request goes
 * through the pipeline document's outbox). `pipeline` must hold the PackData the stage builds on.
 */
export function scheduleStage(
  pipeline: PipelineRecord,
  stage: Stage,
  processor: ProcessorRecord,
  catalogSchema: JsonSchema,
  now: Date,
  correlationId: string,
): ScheduledStage {
  const attempt = pipeline.stages[stage].attempt + 1;
  const requestId = requestIdOf(pipeline._id, stage, attempt);
  const { built, trace } = inStageSpan('start', pipeline, stage, processor, attempt, undefined, () =>
    stageRequest(pipeline, stage, processor, catalogSchema, requestId, correlationId),
  );
  const { event, mode } = built;
  return {
    fields: {
      ...replacedAttemptCleared(),
      ...(trace.traceparent && { trace }),
      state: 'SCHEDULED',
      processor_id: processor._id,
      attempt,
      request_id: requestId,
      schema_mode: mode,
      started_at: now,
      finished_at: null,
      error: null,
      cost: null,
      origin: 'generated',
      // A new attempt owns no PackData until its result: the previous attempt's stays only in
      // the history (`pack_data`), so a FAILED re-run never shows or passes on stale data (rule 3).
      pack_data_json: null,
      gen_ui_json: null,
      gen_ui_valid: null,
    },
    event,
  };
}

/**
 * The generate request of `stage` under `requestId`: built when the stage is scheduled, and
 * again, with the same request id, when the sweeper sends it once more (`resend` numbers the copy).
 */
export function stageRequest(
  pipeline: PipelineRecord,
  stage: Stage,
  processor: ProcessorRecord,
  catalogSchema: JsonSchema,
  requestId: string,
  correlationId: string,
  resend?: number,
): { event: Envelope; mode: FinalSchema['mode'] } {
  const schema = finalSchema({
    kind: processor.kind,
    response_schema:
      processor.response_schema_json === null
        ? null
        : (JSON.parse(processor.response_schema_json) as JsonSchema),
    generative_ui: processor.generative_ui,
    catalog_schema: catalogSchema,
  });
  const event = generateRequest({
    requestId,
    processor,
    // Self-healing (spec endpoint rule 3): CONFIG sees what happened before.
    user: [
      stagePrompt(pipeline, stage),
      ...(stage === 'CONFIG' && pipeline.execution_context ? [pipeline.execution_context] : []),
    ],
    schema: schema.mode === 'none' ? null : schema.schema,
    replyKind: 'stage',
    replyTo: { pipeline_id: pipeline._id, stage, run: pipeline.run, service_id: pipeline.service_id },
    correlationId,
    resend,
  });
  return { event, mode: schema.mode };
}

/** A new run of the item's latest approved declaration, no stage started yet (`run` still 0). */
export function draftPipeline(
  id: number,
  item: ServiceItemRecord,
  origin: string,
  now: Date,
  executionContext: string | null = null,
): PipelineRecord {
  return {
    _id: id,
    service_item_id: item.service_item_id,
    service_id: item.service_id,
    run: 0,
    origin,
    declaration_id: item.declaration_id,
    declaration_json: item.declaration_json,
    stages: { CONFIG: emptyStage(), VERIFY: emptyStage(), EXECUTION: emptyStage() },
    costs: [],
    change_instance_id: item.change_instance_id ?? null,
    execution_context: executionContext,
    created_at: now,
    updated_at: now,
  };
}

export function emptyStage(): StageRecord {
  return {
    state: null,
    processor_id: null,
    attempt: 0,
    request_id: null,
    schema_mode: null,
    started_at: null,
    finished_at: null,
    error: null,
    cost: null,
    pack_data_json: null,
    gen_ui_json: null,
    gen_ui_valid: null,
  };
}

/** An earlier stage's outcome carried into a new run that starts later (its cost stays with its own run). */
export function carried(stage: StageRecord): StageRecord {
  return {
    ...emptyStage(),
    state: stage.state,
    processor_id: stage.processor_id,
    started_at: stage.started_at,
    finished_at: stage.finished_at,
    pack_data_json: stage.pack_data_json,
    gen_ui_json: stage.gen_ui_json,
    gen_ui_valid: stage.gen_ui_valid,
    gen_ui_error: stage.gen_ui_error ?? null,
    origin: stage.origin ?? 'generated',
  };
}

/**
 * A `pack.stage` span (service item, stage, run, processor) around building a stage's generate
 * request, so the request event carries it: the LLM call and the result that follow are its
 * descendants. `phase` says whether the stage starts or its request is sent again; a resend
 * continues the trace stored with the stage (`parent`), not the sweeper's timer. Returns what
 * `build` returned and the span's context, to be stored with the stage.
 */
export function inStageSpan<T>(
  phase: 'start' | 'resend',
  pipeline: PipelineRecord,
  stage: Stage,
  processor: ProcessorRecord,
  attempt: number,
  parent: TraceCarrier | undefined,
  build: () => T,
): { built: T; trace: TraceCarrier } {
  const span = startSpan('pack.stage', {
    parent: parent?.traceparent ? contextOf(parent) : context.active(),
    attributes: {
      'pack.stage.phase': phase,
      'pack.service_item.id': pipeline.service_item_id,
      'pack.pipeline.id': pipeline._id,
      'pack.stage': stage,
      'pack.run': pipeline.run,
      'pack.stage.attempt': attempt,
      'pack.processor.id': processor._id,
      'pack.processor.kind': processor.kind,
    },
  });
  const active = trace.setSpan(context.active(), span);
  try {
    return { built: context.with(active, build), trace: carrierOf(active) };
  } finally {
    span.end();
  }
}
