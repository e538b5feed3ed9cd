import type { Stage } from '@pack/contracts';
import type {
  GenerateResult,
  PipelineRecord,
  StageExpectation,
  StageRecord,
} from '../records/pipeline-records';
import type { PipelineDeps } from '../stage-moves/pipeline-deps';
import type { StageMoves } from '../stage-moves/stage-moves';

/** What every outcome of a stage result uses: the orchestrator's parts and the shared stage moves. */
export interface ResultParts {
  deps: PipelineDeps;
  moves: StageMoves;
}

/**
 * A generate result that names its stage's running attempt, and what it makes of the stage
 * (stage-results.ts decides which outcome it is and keeps its PackData; ok.ts, failed.ts and
 * superseded.ts move the stage, answering the state it ended in, or null when the move lost its
 * race).
 */
export interface Settling {
  result: GenerateResult;
  pipeline: PipelineRecord;
  stage: Stage;
  /** The stage as read (its attempt is the result's, and it is running). */
  current: StageRecord;
  now: Date;
  /** The move's condition: the stage still running this request (and unchanged since `rev`, from memory). */
  expect: StageExpectation;
  /** The stage's fields every ending sets: when, the cost, the model that answered, the output. */
  ended: Partial<StageRecord>;
  /** Why the stage failed (no output, or an output the stage refuses), else null. */
  error: string | null;
  /** The call had no prices: its cost is unknown, not 0 (not 0: nothing billed is not unpriced). */
  unpriced: boolean;
}
