import type { StageRecord } from '../records/pipeline-records';
import type { ResultParts, Settling } from './settling';

/**
 * The result of a run a newer one took over (a retrigger, a CONFIG trigger, a new approval): the
 * stage ends OK or FAILED as the result says, with its cost and the `superseded` mark; nothing
 * follows and the run's end is nobody's news.
 */
export async function superseded(
  { moves }: ResultParts,
  settling: Settling,
): Promise<'OK' | 'FAILED' | null> {
  const { result, pipeline, stage, ended, error } = settling;
  const state = error === null ? 'OK' : 'FAILED';
  const fields: Partial<StageRecord> = { ...ended, state, error, superseded: true };
  const moved = await moves.endMove(
    pipeline._id,
    stage,
    settling.expect,
    fields,
    [],
    result.cost,
    settling.unpriced,
  );
  return moved && state;
}
