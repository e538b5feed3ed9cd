import type { StageRecord } from '../records/pipeline-records';
import { withStages } from '../stage-moves/progress';
import { settled, type ResultParts, type Settling } from './settling';

/**
 * A running stage's result that fails it (no output, or one the stage refuses): the stage ends
 * FAILED with the reason and the run ends with it, its Change Instance and optimizer told, in one
 * write. An executor's failed report is kept as the stage's PackData version too. False when the
 * move lost its race (stage-results.ts then asks again on a fresh read).
 */
export async function failed({ deps, moves }: ResultParts, settling: Settling): Promise<boolean> {
  const { result, pipeline, stage, current, now, ended, packData } = settling;
  const reason = settling.error ?? 'generation failed';
  const fields: Partial<StageRecord> = { ...ended, state: 'FAILED', error: reason };
  const events = await moves.finishing(withStages(pipeline, { [stage]: fields }), 'FAILED', [
    `${stage}: ${reason}`,
  ]);
  const saved = packData ? settled(deps.store.savePackData(packData)) : null;
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
  await saved;
  if (moved) moves.ended(stage, 'FAILED', current, now);
  return moved !== null;
}
