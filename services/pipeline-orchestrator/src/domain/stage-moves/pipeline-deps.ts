import type { Envelope, JsonSchema, Stage } from '@pack/contracts';
import type { AiSwitches } from '../records/ai-switches';
import type { BudgetGate } from '../budgets/budgets';
import type { ActiveProcessors, ProcessorRecord } from '../records/processor-records';
import type { DirectoryStore } from '../records/store';
import type { PipelineRecord, RunOutcome, StageState } from '../records/pipeline-records';
import type { PipelineStore, RequestSender, ServiceItemStore } from '../records/store';

export interface PipelineObserver {
  transition(stage: Stage, state: StageState): void;
  /** A stage ended (OK or FAILED) `seconds` after it was scheduled. */
  finished(stage: Stage, outcome: 'ok' | 'failed', seconds: number): void;
}

/** What the Pipelines use case needs; every part is given (service.ts wires them). */
export interface PipelineDeps {
  store: PipelineStore;
  items: ServiceItemStore;
  directory: DirectoryStore;
  /** The active processor of a stage, read from the database (triggers, approvals; stage-processors.ts). */
  processors: ActiveProcessors;
  /** Where a result looks up what comes next: this replica's remembered lookups (processor-cache.ts). */
  nextProcessors: ActiveProcessors;
  /** An approval's first stage: a remembered active processor, else the database (ProcessorCache.activeOrRead). */
  approvalProcessors: ActiveProcessors;
  /** A processor by id, also an inactive or deleted one (a generative UI fallback checks its data schema). */
  findProcessor(id: number): Promise<ProcessorRecord | null>;
  catalogSchema(): JsonSchema;
  observer: PipelineObserver;
  /** The item's execution context for a new run's CONFIG prompt (execution-context.ts); null when it has none. */
  context: {
    render(
      serviceItemId: number,
      run?: Promise<number>,
      target?: ContextTarget,
      approval?: boolean,
    ): Promise<string | null>;
  };
  /**
   * Events written with the move that ends a run (an OK with no later active processor, or a FAILED): its Change
   * Instance's progress and the Pack Optimizer's request (PackOptimizer.finishing, optimizer.ts).
   * `optimizer`, when given, is the Service's active Pack Optimizer looked up already.
   */
  finishing(
    pipeline: PipelineRecord,
    outcome: RunOutcome,
    reasons: string[],
    optimizer?: ProcessorRecord | null,
  ): Promise<Envelope[]>;
  /** Sends a scheduled stage's generate request and marks the stage WAITING_FOR_RESPONSE. */
  requests: RequestSender;
  /** The AI switches of the General Settings: with `processors()` off no stage starts (ai-switches.ts). */
  switches: AiSwitches;
  /** The Service's AI budget: at its limit no stage starts (budgets.ts, docs/decisions/0046). */
  budget: BudgetGate;
}

/** For whom the context is built: the new run's CONFIG model and the declaration it works on. */
export interface ContextTarget {
  /** The LLM model of the config processor that will read the context (its budget); null: the default budget. */
  modelId: number | null;
  /** The declaration the new run works on: an earlier run on the same one does not repeat its text. */
  declarationId: number | null;
}
