import type { StageRecord } from '../records/pipeline-records';
import { settled, type ResultParts, type Settling } from './settling';

/**
 * The result of a run a newer one took over (a retrigger, a CONFIG trigger, a new approval): the
 * stage ends OK or FAILED as the result says, with its cost and the `superseded` mark; nothing
 * follows and the run's end is nobody's news. False when the move lost its race.
 */
export async function superseded({ deps, moves }: ResultParts, settling: Settling): Promise<boolean> {
  const { result, pipeline, stage, current, now, ended, packData, error } = settling;
  const state = error === null ? 'OK' : 'FAILED';
  const fields: Partial<StageRecord> = { ...ended, state, error, superseded: true };
  const saved = packData ? settled(deps.store.savePackData(packData)) : null;
  const moved = await moves.endMove(
    pipeline._id,
    stage,
    settling.expect,
    fields,
    [],
    result.cost,
    settling.unpriced,
  );
  await saved;
  if (moved) moves.ended(stage, state, current, now);
  return moved !== null;
}
