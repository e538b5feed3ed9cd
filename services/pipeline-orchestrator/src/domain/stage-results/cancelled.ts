import { NEXT_STAGE, type StageRecord } from '../records/pipeline-records';
import type { ResultParts, Settling } from './settling';

/**
 * The result of a call made before the run's Change Instance was CANCELLED (docs/decisions/0055):
 * the stage ends OK or FAILED as the result says, with its cost counted (the call was paid for);
 * nothing starts after it, the next stage not yet started says why, and the run's end is nobody's
 * news (the Change Instance is final, no Pack Optimizer is asked).
 */
export async function cancelled({ deps }: ResultParts, settling: Settling): Promise<'OK' | 'FAILED' | null> {
  const { result, pipeline, stage, ended, error } = settling;
  const state = error === null ? 'OK' : 'FAILED';
  const fields: Partial<StageRecord> = { ...ended, state, error };
  const next = NEXT_STAGE[stage];
  const note =
    next && pipeline.cancelled && pipeline.stages[next].state === null
      ? { [next]: { error: pipeline.cancelled.reason } }
      : {};
  const moved = await deps.store.move(
    pipeline._id,
    stage,
    settling.expect,
    { [stage]: fields, ...note },
    [],
    result.cost,
    settling.unpriced,
  );
  return moved && state;
}
