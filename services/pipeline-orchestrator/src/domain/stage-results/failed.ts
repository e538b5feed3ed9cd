import type { StageRecord } from '../records/pipeline-records';
import { withStages } from '../stage-moves/progress';
import type { ResultParts, Settling } from './settling';

/**
 * A running stage's result that fails it (no output, or one the stage refuses): the stage ends
 * FAILED with the reason and the run ends with it, its Change Instance and optimizer told, in one
 * write (an executor's failed report is kept as the stage's PackData version too, stage-results.ts).
 */
export async function failed({ moves }: ResultParts, settling: Settling): Promise<'FAILED' | null> {
  const { result, pipeline, stage, ended } = settling;
  const reason = settling.error ?? 'generation failed';
  const fields: Partial<StageRecord> = { ...ended, state: 'FAILED', error: reason };
  const events = await moves.finishing(withStages(pipeline, { [stage]: fields }), 'FAILED', [
    `${stage}: ${reason}`,
  ]);
  const live = { ...settling.expect, current: true };
  const moved = await moves.endMove(
    pipeline._id,
    stage,
    live,
    fields,
    events,
    result.cost,
    settling.unpriced,
  );
  return moved && 'FAILED';
}
