import {
  parseExactJson,
  STAGES,
  type PipelineStageView,
  type PipelineStatus,
  type PipelineSummary,
  type PipelineView,
} from '@pack/contracts';
import { sumCosts } from '@pack/llm-providers';
import type { PipelineRecord } from '../records/pipeline-records';

/**
 * How costs show to the caller: hidden (Charges Settings) or shown, in the Currency setting's
 * currency (null: the Currency group is disabled, amounts name no currency).
 */
export interface CostDisplay {
  show: boolean;
  currency: string | null;
}

/** A stage's processor name and its model's provider identifier (pipeline-reads.ts). */
export interface StageNames {
  processor_name: string;
  model_name: string | null;
}

/**
 * Stored JSON text as a value, numbers exact (the response writer keeps their digits); absent in
 * a list row (read without PackData and generative UI): null.
 */
const parsed = <T>(json: string | null | undefined) =>
  json === null || json === undefined ? null : (parseExactJson(json) as T);

/**
 * DESIGN section 7's pipeline response; the total is the exact decimal sum of every priced call's
 * cost, labelled `priced_calls_only` when some call was unpriced (spec 2.2: unpriced is not zero).
 */
export function pipelineView(
  pipeline: PipelineRecord,
  costs: CostDisplay,
  names: ReadonlyMap<number, StageNames> = new Map(),
  /** Provider identifiers of the models that answered for another (fallbacks), by model id. */
  answeredNames: ReadonlyMap<number, string> = new Map(),
  serviceName: string | null = null,
): PipelineView {
  const unpriced = pipeline.unpriced_calls ?? 0;
  return {
    id: pipeline._id,
    service_item: pipeline.service_item_id,
    service: { id: pipeline.service_id, name: serviceName },
    run: pipeline.run,
    created_at: pipeline.created_at.toISOString(),
    updated_at: pipeline.updated_at.toISOString(),
    total_cost: costs.show ? sumCosts(pipeline.costs).total : null,
    total_cost_covers: costs.show ? (unpriced > 0 ? 'priced_calls_only' : 'all_calls') : null,
    unpriced_calls: costs.show ? unpriced : null,
    currency: costs.show ? costs.currency : null,
    superseded_by: pipeline.superseded_by ?? null,
    cancelled: pipeline.cancelled
      ? {
          change_instance: pipeline.cancelled.change_instance_id,
          at: pipeline.cancelled.at.toISOString(),
          reason: pipeline.cancelled.reason,
        }
      : null,
    stages: STAGES.map((stage) => {
      const record = pipeline.stages[stage];
      return {
        stage,
        state: record.state,
        processor: record.processor_id,
        processor_name:
          (record.processor_id !== null && names.get(record.processor_id)?.processor_name) || null,
        model_name: (record.processor_id !== null && names.get(record.processor_id)?.model_name) || null,
        answered_model_id: record.answered_model_id ?? null,
        answered_model_name: answeredName(record, names, answeredNames),
        fallback_from: record.fallback_from ?? null,
        started_at: record.started_at?.toISOString() ?? null,
        finished_at: record.finished_at?.toISOString() ?? null,
        error: record.error,
        cost: costs.show ? record.cost : null,
        pack_data: parsed<PipelineStageView['pack_data']>(record.pack_data_json),
        gen_ui: parsed<Record<string, unknown>>(record.gen_ui_json),
        gen_ui_valid: record.gen_ui_valid,
        gen_ui_error: record.gen_ui_valid === false ? (record.gen_ui_error ?? null) : null,
        unpriced: record.unpriced ?? false,
        superseded: record.superseded ?? false,
        // Stages stored before `origin` existed were all generated.
        origin: record.origin ?? (record.state === null ? null : 'generated'),
      };
    }),
  };
}

/** The answering model's name: the processor's model's, or a fallback's. */
function answeredName(
  record: PipelineRecord['stages'][keyof PipelineRecord['stages']],
  names: ReadonlyMap<number, StageNames>,
  answeredNames: ReadonlyMap<number, string>,
): string | null {
  const id = record.answered_model_id ?? null;
  if (id === null) return null;
  if (record.fallback_from !== null && record.fallback_from !== undefined)
    return answeredNames.get(id) ?? null;
  return (record.processor_id !== null && names.get(record.processor_id)?.model_name) || null;
}

/** The models that answered a stage for another model (fallbacks): their names are read apart. */
export function fallbackAnswerers(pipeline: PipelineRecord): number[] {
  return STAGES.flatMap((stage) => {
    const record = pipeline.stages[stage];
    return record.fallback_from !== null && record.fallback_from !== undefined && record.answered_model_id
      ? [record.answered_model_id]
      : [];
  });
}

/** A row of the list of latest pipelines: the view without PackData, with its Service and status. */
export function pipelineSummary(
  pipeline: PipelineRecord,
  costs: CostDisplay,
  names: ReadonlyMap<number, StageNames>,
  serviceName: string | null,
): PipelineSummary {
  const { stages, ...view } = pipelineView(pipeline, costs, names, new Map(), serviceName);
  return {
    ...view,
    status: pipeline.status ?? ('running' satisfies PipelineStatus),
    stages: stages.map((stage) => ({
      stage: stage.stage,
      state: stage.state,
      processor: stage.processor,
      processor_name: stage.processor_name,
      model_name: stage.model_name,
      started_at: stage.started_at,
      finished_at: stage.finished_at,
      error: stage.error,
      cost: stage.cost,
    })),
  };
}
