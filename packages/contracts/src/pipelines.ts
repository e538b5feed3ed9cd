import { z } from 'zod';
import { stageSchema, stageStateSchema, type Stage } from './events';
import { storedText } from './text';

/** Pipelines (spec 2.5, 3.1, endpoints 3, 6, 7; DESIGN section 7): the orchestrator's API. */

/** The stage as it is written in a path (`config`, `verify`, `execution`). */
export const stagePathSchema = z
  .enum(['config', 'verify', 'execution'])
  .describe('Pipeline stage: config, verify or execution');

export function stageOfPath(path: z.infer<typeof stagePathSchema>): Stage {
  return path.toUpperCase() as Stage;
}

const jsonObject = z.record(z.string(), z.unknown());

/**
 * A stage's PackData: a JSON object (pushed, or generated), or the array or scalar a response
 * schema whose root is one asked for (docs/decisions/0023). Numbers are kept as sent or
 * generated, digit for digit (docs/decisions/0039).
 */
export const packDataSchema = z
  .union([jsonObject, z.array(z.unknown()), z.string(), z.number(), z.boolean()])
  .nullable()
  .describe(
    "The stage's PackData: a JSON object, or the array or scalar a processor's response schema whose root is one produced; null while the stage has none. " +
      'Numbers are exactly as pushed or generated, text for text (a 19-digit id, a long decimal, 3.10 not 3.1, 1e2 not 100)',
  );

export const pipelineStageViewSchema = z.object({
  stage: stageSchema,
  /** null while the stage has not run in this pipeline. */
  state: stageStateSchema.nullable(),
  /** The processor of the latest attempt, or null. */
  processor: z.number().int().nullable(),
  /** That processor's name (also a deleted one's); null when the stage has no processor. */
  processor_name: z.string().nullable(),
  /** The provider's model identifier of that processor's LLM model, as the orchestrator knows it; null when unknown. */
  model_name: z.string().nullable(),
  /**
   * The LLM model whose reply ended the latest attempt: the processor's model, or the fallback
   * that answered for it; null when none answered (or the stage has not run).
   */
  answered_model_id: z.number().int().nullable(),
  /** That model's provider identifier, as the orchestrator knows it; null when unknown. */
  answered_model_name: z.string().nullable(),
  /** The processor's model when a fallback answered instead of it, else null. */
  fallback_from: z.number().int().nullable(),
  started_at: z.iso.datetime().nullable(),
  finished_at: z.iso.datetime().nullable(),
  error: z.string().nullable(),
  /** Exact decimal string of the latest attempt; null when unknown, unpriced or hidden (Charges Settings). */
  cost: z.string().nullable(),
  /** The stage's PackData, or null. */
  pack_data: packDataSchema,
  /** The generative UI reply, where the processor asked for one. */
  gen_ui: jsonObject.nullable(),
  /** false: the reply is invalid or uses unsupported components (clients fall back); null without generative UI. */
  gen_ui_valid: z.boolean().nullable(),
  /** Why the generative UI falls back to the standard renderer (`gen_ui_valid: false`); null otherwise. */
  gen_ui_error: z.string().nullable(),
  /** The latest attempt's model has no prices: its cost is unknown (not 0) and is in no total. */
  unpriced: z.boolean(),
  /** The result came after a newer run superseded this pipeline: recorded (cost counted), nothing followed it. */
  superseded: z.boolean(),
  /** `generated` by the stage's processor, `pushed` from outside (endpoint 5); null while not run. */
  origin: z.enum(['generated', 'pushed']).nullable(),
});
export type PipelineStageView = z.infer<typeof pipelineStageViewSchema>;

export const pipelineViewSchema = z.object({
  id: z.number().int(),
  service_item: z.number().int(),
  /** 1 for the Service Item's first pipeline, growing by one per new run. */
  run: z.number().int(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  /** Exact decimal sum of every generate call of the pipeline; null when hidden (Charges Settings). */
  total_cost: z.string().nullable(),
  /**
   * What `total_cost` sums: `all_calls`, or `priced_calls_only` when some call's model had no
   * prices (spec 2.2: unpriced is not zero; their cost is unknown). Null when costs are hidden.
   */
  total_cost_covers: z.enum(['all_calls', 'priced_calls_only']).nullable(),
  /** Calls of the pipeline whose model had no prices (not in `total_cost`); null when costs are hidden. */
  unpriced_calls: z.number().int().nonnegative().nullable(),
  /** The Currency setting's code; null when costs are hidden or the Currency group is disabled. */
  currency: z.string().nullable(),
  /** The newer pipeline of the item that superseded this run while it was running, or null. */
  superseded_by: z.number().int().nullable(),
  /**
   * The run's Change Instance was cancelled (docs/decisions/0055): no further stage starts; a call
   * already made is still recorded and costed. Null otherwise.
   */
  cancelled: z
    .object({
      change_instance: z.number().int(),
      at: z.string().describe('When the orchestrator learnt of the cancellation (ISO 8601)'),
      reason: z.string(),
    })
    .nullable()
    .describe(
      'Set when the Change Instance the run works on was CANCELLED: no further stage of the run starts; a result of a call already made is still recorded with its cost',
    ),
  stages: z.array(pipelineStageViewSchema),
});
export type PipelineView = z.infer<typeof pipelineViewSchema>;

/**
 * Where a pipeline is, by the stage that moved last (docs/decisions/0042): `running` (it is
 * SCHEDULED or WAITING_FOR_RESPONSE), `failed` (it FAILED), `waiting` (CONFIG or VERIFY OK, the
 * next stage not started), `done` (EXECUTION OK).
 */
export const pipelineStatusSchema = z
  .enum(['running', 'failed', 'waiting', 'done'])
  .describe(
    'Where the pipeline is, by the stage that moved last: running, failed, waiting (CONFIG or VERIFY OK, next not started) or done (EXECUTION OK)',
  );
export type PipelineStatus = z.infer<typeof pipelineStatusSchema>;

/** One row of the list of latest pipelines: no PackData nor generative UI (read the pipeline for those). */
export const pipelineSummarySchema = pipelineViewSchema.omit({ stages: true }).extend({
  service: z.object({ id: z.number().int(), name: z.string().nullable() }),
  status: pipelineStatusSchema,
  stages: z.array(
    pipelineStageViewSchema.pick({
      stage: true,
      state: true,
      processor: true,
      processor_name: true,
      model_name: true,
      started_at: true,
      finished_at: true,
      error: true,
      cost: true,
    }),
  ),
});
export type PipelineSummary = z.infer<typeof pipelineSummarySchema>;

/** The most a retrigger's feedback may say (it goes into every later CONFIG prompt). */
export const FEEDBACK_MAX_LENGTH = 4000;

/** Endpoint 4's body; the body itself may be left out. */
export const retriggerBodySchema = z
  .object({
    feedback: storedText()
      .max(FEEDBACK_MAX_LENGTH)
      .optional()
      .describe('What went wrong or what to change; part of the execution context of later runs'),
  })
  .strict()
  .optional();

/** Endpoint 5's body: the stage's PackData, any JSON object, numbers kept exactly (docs/decisions/0039). */
export const packDataBodySchema = jsonObject.describe(
  "The stage's PackData (any JSON object). Numbers are kept exactly as sent, text for text (a 19-digit id, a long decimal, 3.10 not 3.1, 1e2 not 100), and every read returns them the same way",
);

export const packDataPushedSchema = z.object({
  /** The latest run, holding the pushed PackData (and the next stage started, when it has a processor). */
  pipeline: pipelineViewSchema,
  /** The new run from CONFIG that PackData pushed into EXECUTION with `retrigger=true` started (within the bound), or null. */
  retrigger: pipelineViewSchema.nullable(),
});
export type PackDataPushed = z.infer<typeof packDataPushedSchema>;
