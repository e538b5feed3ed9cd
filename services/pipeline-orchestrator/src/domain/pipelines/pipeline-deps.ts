import type { ChangeInstanceState, Envelope, JsonSchema, ProcessorKind, Stage } from '@pack/contracts';
import type { Directory, ProcessorRecord } from '../processors/processor-records';
import type {
  PipelineRecord,
  PipelineStore,
  RequestSender,
  ServiceItemStore,
  StageState,
} from './pipeline-records';

/** What the Pipelines use case needs, and the words it shares with its callers. */
export interface ActiveProcessors {
  /** The active processor of a Service for a kind, or null. */
  active(serviceId: number, kind: ProcessorKind): Promise<ProcessorRecord | null>;
}

export interface PipelineObserver {
  transition(stage: Stage, state: StageState): void;
  /** A stage ended (OK or FAILED) `seconds` after it was scheduled. */
  finished(stage: Stage, outcome: 'ok' | 'failed', seconds: number): void;
}

export interface PipelineDeps {
  store: PipelineStore;
  items: ServiceItemStore;
  directory: Directory;
  processors: ActiveProcessors;
  /** Where a result looks up what comes next: remembered lookups (processor-cache.ts); `processors` without. */
  nextProcessors?: ActiveProcessors;
  /** A processor by id, also an inactive or deleted one (a generative UI fallback checks its data schema). */
  findProcessor?(id: number): Promise<ProcessorRecord | null>;
  catalogSchema(): JsonSchema;
  observer: PipelineObserver;
  /** The item's execution context for a new run's CONFIG prompt (execution-context.ts); none without. */
  context?: { render(serviceItemId: number): Promise<string | null> };
  /** Events written with the move that ends a run: EXECUTION OK, or a stage FAILED (PackOptimizer.finishing, optimizer.ts). */
  finishing?(
    pipeline: PipelineRecord,
    outcome: RunOutcome,
    reasons: string[],
    optimizer?: ProcessorRecord | null,
  ): Promise<Envelope[]>;
  /** Sends a scheduled stage's generate request and marks the stage WAITING_FOR_RESPONSE. */
  requests: RequestSender;
}

export type RunOutcome = 'COMPLETED' | 'FAILED';

/** What a Change Instance event tells the pipeline (created or state_changed). */
export interface ChangeInstanceNews {
  change_instance_id: number;
  service_item_id: number;
  declaration_id: number;
  declaration_json: string;
  service: { id: number };
  state: ChangeInstanceState;
}

export const KIND_OF: Record<Stage, ProcessorKind> = {
  CONFIG: 'config',
  VERIFY: 'verify',
  EXECUTION: 'execution',
};
