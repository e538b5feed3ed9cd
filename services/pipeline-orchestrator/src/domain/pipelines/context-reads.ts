import { parseExactJson, type ExecutionContextView, type Principal } from '@pack/contracts';
import type { ActiveProcessors } from '../records/processor-records';
import type { ServiceItemRecord } from '../records/pipeline-records';
import { contextStages } from './context-text';
import type { ContextSnapshot, ExecutionContext } from './execution-context';

const parsed = (json: string | null) => (json === null ? null : parseExactJson(json));

/**
 * The context read route: the snapshot the next run of the item would store and send to its
 * CONFIG, built as `Pipelines.startRun` builds it (the Service's active config processor's model,
 * the item's latest approved declaration), shown to who may see the item.
 */
export class ContextReads {
  constructor(
    private readonly deps: {
      items: { visibleItem(principal: Principal, serviceItemId: number): Promise<ServiceItemRecord> };
      processors: ActiveProcessors;
      context: Pick<ExecutionContext, 'snapshot'>;
    },
  ) {}

  async read(principal: Principal, serviceItemId: number): Promise<ExecutionContextView> {
    const item = await this.deps.items.visibleItem(principal, serviceItemId);
    const processor = await this.deps.processors.active(item.service_id, 'config');
    const snapshot = await this.deps.context.snapshot(serviceItemId, {
      modelId: processor?.llm_model_id ?? null,
      declarationId: item.declaration_id,
    });
    return contextView(snapshot);
  }
}

export function contextView(snapshot: ContextSnapshot): ExecutionContextView {
  return {
    service_item: snapshot.service_item_id,
    model: snapshot.model_id === null ? null : { id: snapshot.model_id, model_name: snapshot.model_name },
    budget: snapshot.budget,
    text: snapshot.text,
    characters: snapshot.text?.length ?? 0,
    runs: snapshot.runs.map(({ entry, cut }) => ({
      run: entry.run,
      pipeline: entry.pipeline?._id ?? null,
      declaration_id: entry.pipeline?.declaration_id ?? null,
      current_declaration: entry.current_declaration,
      declaration: parsed(entry.pipeline?.declaration_json ?? null),
      cut,
      stages: entry.pipeline
        ? contextStages(entry.pipeline).map((stage) => ({
            stage: stage.stage,
            state: stage.state,
            origin: stage.origin,
            error: stage.error,
            pack_data: parsed(
              stage.pack_data_json,
            ) as ExecutionContextView['runs'][number]['stages'][number]['pack_data'],
          }))
        : [],
      feedback: entry.feedback,
      optimizer_notes: entry.optimizer_notes,
    })),
    left_out_runs: snapshot.left_out,
  };
}
