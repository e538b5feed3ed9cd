import { z } from 'zod';
import { CHANGE_INSTANCE_STATES } from './change-instance-states';
import { llmModelSnapshot, processorSnapshot, serviceSnapshot } from './snapshots';

/** A versioned event type and the zod schema of its payload. */
export interface EventDefinition<T extends string = string, S extends z.ZodType = z.ZodType> {
  readonly type: T;
  readonly schema: S;
}

function defineEvent<T extends string, S extends z.ZodType>(type: T, schema: S): EventDefinition<T, S> {
  return { type, schema };
}

const serviceRef = z.object({
  id: z.number().int(),
  name: z.string(),
  owner: z.object({ id: z.number().int(), name: z.string() }),
});

export { CHANGE_INSTANCE_STATES };
export const changeInstanceStateSchema = z.enum(CHANGE_INSTANCE_STATES);
export type ChangeInstanceState = z.infer<typeof changeInstanceStateSchema>;

/**
 * What every change-instance event carries, so a consumer (webhooks, pipeline) never has to call
 * the catalog back: the Service as spec 4.1's webhook body needs it (id, name, owner id and
 * name, current at the time of the change) and the declaration as JSON text (user JSON may hold
 * keys that MongoDB-wire stores refuse, DESIGN section 2).
 */
const changeInstanceFields = {
  change_instance_id: z.number().int(),
  service_item_id: z.number().int(),
  declaration_id: z.number().int(),
  /** The submitted declaration, a JSON object serialised as text. */
  declaration_json: z.string(),
  consumer_id: z.number().int(),
  consumer_name: z.string(),
  service: serviceRef,
  /** The state after the change (for `created`: the state it was created in). */
  state: changeInstanceStateSchema,
};

/** Who made a state change: a user (owner or admin), the AI validator, the Service's auto-approval, or its pipeline's progress. */
export const changeInstanceActorSchema = z.object({
  kind: z.enum(['user', 'validator', 'auto_approval', 'pipeline']),
  user_id: z.number().int().nullable(),
  username: z.string().nullable(),
});
export type ChangeInstanceActor = z.infer<typeof changeInstanceActorSchema>;

export const STAGES = ['CONFIG', 'VERIFY', 'EXECUTION'] as const;
export const stageSchema = z.enum(STAGES);
export type Stage = z.infer<typeof stageSchema>;

export const STAGE_STATES = ['SCHEDULED', 'WAITING_FOR_RESPONSE', 'OK', 'FAILED'] as const;
export const stageStateSchema = z.enum(STAGE_STATES);

const chatMessage = z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() });
const usage = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  /** Part of input_tokens served from the provider's cache, when it reports it. */
  cached_input_tokens: z.number().int().nonnegative().optional(),
  /** Part of output_tokens spent on reasoning, when the provider reports it. */
  reasoning_tokens: z.number().int().nonnegative().optional(),
});
const generateReplyTo = z.object({
  pipeline_id: z.number().int(),
  stage: stageSchema,
  run: z.number().int(),
  /**
   * The pipeline's Service, echoed back with the result so the orchestrator can look up the next
   * processor while it reads the pipeline. Optional: requests sent before it existed lack it.
   */
  service_id: z.number().int().optional(),
});

/**
 * What a generate request is for, chosen by the requester and echoed in its result: each kind's
 * result has its own event type, so each consumer's queue is bound to (and receives) only its
 * own kind (docs/decisions/0036).
 */
export const GENERATE_REPLY_KINDS = ['stage', 'validation', 'optimization'] as const;
export const generateReplyKindSchema = z.enum(GENERATE_REPLY_KINDS);
export type GenerateReplyKind = z.infer<typeof generateReplyKindSchema>;

/**
 * Optional on the request and on its result: a request sent before it existed (still in flight
 * during a rolling upgrade) lacks it, and its result goes out as `llm.generate.completed.v1`
 * without it (the orchestrator then tells the kinds apart by request id).
 */
const replyKind = generateReplyKindSchema.optional();

/** One generate result (the payload of every kind's result event). */
const generateCompleted = z.object({
  request_id: z.string().min(1),
  llm_model_id: z.number().int(),
  processor_id: z.number().int().nullable(),
  reply_to: generateReplyTo.nullable(),
  reply_kind: replyKind,
  ok: z.boolean(),
  /** The generated text (the last reply when structured output failed), or null. */
  output: z.string().nullable(),
  /** The reply parsed and valid for the request's schema, as JSON text; null without a schema or on failure. */
  parsed_json: z.string().nullable(),
  /** Tokens of every provider call made for the request (a re-ask included); null when none answered. */
  usage: usage.nullable(),
  /** Exact decimal string; null when unpriced or nothing was billed. */
  cost: z.string().nullable(),
  /** The model has no prices: the cost is unknown, never 0. */
  unpriced: z.boolean(),
  /** How the schema reached the model: natively, as prompt instructions, or no schema. */
  mode: z.enum(['native', 'instructions', 'none']),
  /** Provider calls made, retries and a re-ask included. */
  attempts: z.number().int().nonnegative(),
  latency_ms: z.number().int().nonnegative(),
  error: z.object({ kind: z.string(), message: z.string() }).nullable(),
  /**
   * The model whose reply is `output`: the asked model, or the fallback that answered;
   * null when no model answered. Absent in results sent before fallbacks existed.
   */
  answered_model_id: z.number().int().nullable().optional(),
  /** The asked model's id when a fallback answered, else null (absent before fallbacks existed). */
  fallback_from: z.number().int().nullable().optional(),
});

export const events = {
  /**
   * A consumer submitted a declaration and a Change Instance was created (state PENDING). When
   * the Service auto-approves, `auto_approved` is true and a state_changed PENDING -> APPROVED
   * follows, recorded by the same write.
   */
  changeInstanceCreated: defineEvent(
    'catalog.change_instance.created.v1',
    z.object({ ...changeInstanceFields, auto_approved: z.boolean() }),
  ),
  /**
   * A Change Instance moved from `old_state` to `state`. A move to APPROVED makes `declaration_id`
   * / `declaration_json` the latest approved declaration of the Service Item.
   */
  changeInstanceStateChanged: defineEvent(
    'catalog.change_instance.state_changed.v1',
    z.object({
      ...changeInstanceFields,
      old_state: changeInstanceStateSchema,
      /** Why (a rejection's reasons, the validator's reasons); may be empty. */
      reasons: z.array(z.string()),
      changed_by: changeInstanceActorSchema,
      /**
       * A move to APPROVED: the approval's number. A later approval has a greater one, whatever
       * the declaration's age; the highest is the item's latest approved declaration (decision
       * 0005). Absent on other moves, and in events written before it was sent.
       */
      approval_seq: z.number().int().positive().optional(),
    }),
  ),
  changeInstanceValidationDecided: defineEvent(
    'pipeline.change_instance.validation_decided.v1',
    z.object({
      change_instance_id: z.number().int(),
      decision: z.enum(['approve', 'reject']),
      reasons: z.array(z.string()),
    }),
  ),
  /**
   * The Change Instance Validator gave no decision (its reply was not `{decision, reasons}`, or
   * the call failed): the instance waits for its owner, and records why (docs/decisions/0056).
   */
  changeInstanceValidationUndecided: defineEvent(
    'pipeline.change_instance.validation_undecided.v1',
    z.object({
      change_instance_id: z.number().int(),
      reason: z.string(),
      at: z.iso.datetime(),
    }),
  ),
  /**
   * How a Change Instance's pipeline is doing (docs/decisions/0026): IN_PROGRESS when a run
   * starts (or restarts after a failure), COMPLETED when EXECUTION ends OK, FAILED when a stage
   * fails. `version` grows with every progress of the Service Item's pipelines (run, then moves
   * within the run), so the catalog applies only a newer one: a late event never moves back.
   */
  pipelineProgress: defineEvent(
    'pipeline.change_instance.progress.v1',
    z.object({
      change_instance_id: z.number().int(),
      service_item_id: z.number().int(),
      pipeline_id: z.number().int(),
      run: z.number().int(),
      state: z.enum(['IN_PROGRESS', 'COMPLETED', 'FAILED']),
      /** Why: the failed stage and its error; empty otherwise. */
      reasons: z.array(z.string()),
      version: z.number().int().positive(),
    }),
  ),
  settingsChanged: defineEvent(
    'settings.general_settings.changed.v1',
    z.object({
      groups: z.array(z.string()),
      version: z.number().int(),
      changed_by: z.number().int().nullable(),
    }),
  ),
  /**
   * Generate text with an LLM Model, for a pipeline stage or a validator. `request_id` is the
   * idempotency key: however often this message is delivered, the provider is called once and
   * one result (possibly republished, same payload) is published for it. The correlation id
   * travels in the envelope.
   */
  llmGenerateRequested: defineEvent(
    'llm.generate.requested.v1',
    z.object({
      request_id: z.string().min(1).max(200),
      llm_model_id: z.number().int(),
      messages: z.array(chatMessage).min(1),
      /** A JSON Schema as JSON text (user JSON, DESIGN section 2), or null for free text. */
      response_schema: z.string().nullable(),
      processor_id: z.number().int().nullable(),
      reply_to: generateReplyTo.nullable(),
      /** Which result event answers it (docs/decisions/0036); absent: `llm.generate.completed.v1`. */
      reply_kind: replyKind,
    }),
  ),
  /**
   * The outcome of one generate request. Published at least once per request id, always with the
   * same payload: consumers keep the first and drop repeats by `request_id`. This type carries
   * pipeline stage results (`reply_kind` 'stage') and every result of a request without a
   * `reply_kind` (sent before it existed); the other kinds have their own types below.
   */
  llmGenerateCompleted: defineEvent('llm.generate.completed.v1', generateCompleted),
  /** The result of a Change Instance Validator's request (`reply_kind` 'validation'). */
  llmValidationCompleted: defineEvent('llm.generate.validation_completed.v1', generateCompleted),
  /** The result of a Pack Optimizer's request (`reply_kind` 'optimization'). */
  llmOptimizationCompleted: defineEvent('llm.generate.optimization_completed.v1', generateCompleted),
  pipelineStageChanged: defineEvent(
    'pipeline.stage.changed.v1',
    z.object({
      pipeline_id: z.number().int(),
      service_item_id: z.number().int(),
      stage: stageSchema,
      state: stageStateSchema,
    }),
  ),
  /** Published by the catalog on every create, update and delete of a Service. */
  serviceChanged: defineEvent('catalog.service.changed.v1', serviceSnapshot),
  /**
   * Published by the webhook-dispatcher replica that wrote a webhook (create, update, secret
   * rotation, delete, the 410 auto-disable; `webhook_id` null: every webhook of the Service got
   * a new owner), before it answers. Every replica hears it on a broadcast queue and forgets its
   * cached webhooks of the Service (docs/decisions/0031). `version` is the webhook's after the
   * change, null for a deletion or a change of every webhook of the Service.
   */
  webhookChanged: defineEvent(
    'webhooks.webhook.changed.v1',
    z.object({
      service_id: z.number().int(),
      webhook_id: z.number().int().nullable(),
      version: z.number().int().nullable(),
      deleted: z.boolean(),
    }),
  ),
  /** Published by the llm-gateway on every create, update and delete of a model. */
  llmModelChanged: defineEvent('llm.model.changed.v1', llmModelSnapshot),
  processorCreated: defineEvent('pipeline.processor.created.v1', processorSnapshot),
  processorUpdated: defineEvent('pipeline.processor.updated.v1', processorSnapshot),
  /** Its `active` flag changed (on or off): the one change the llm-gateway's 409 depends on. */
  processorActivated: defineEvent('pipeline.processor.activated.v1', processorSnapshot),
  processorDeleted: defineEvent('pipeline.processor.deleted.v1', processorSnapshot),
} as const;

/** Every processor event: each carries the whole snapshot, so consumers treat them alike. */
export const PROCESSOR_EVENTS = [
  events.processorCreated,
  events.processorUpdated,
  events.processorActivated,
  events.processorDeleted,
] as const;

export type EventName = keyof typeof events;
export type EventData<D extends EventDefinition> = z.infer<D['schema']>;

/**
 * The event a generate result goes out as: its kind's own type (its routing key), or
 * `llm.generate.completed.v1` for stage results and for requests without a `reply_kind`.
 */
export function generateResultEvent(kind: GenerateReplyKind | undefined) {
  if (kind === 'validation') return events.llmValidationCompleted;
  if (kind === 'optimization') return events.llmOptimizationCompleted;
  return events.llmGenerateCompleted;
}
