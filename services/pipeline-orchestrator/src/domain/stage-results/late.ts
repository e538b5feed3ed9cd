import type { Stage } from '@pack/contracts';
import type { GenerateResult, PipelineRecord, StageRecord } from '../records/pipeline-records';
import { attemptOf } from '../stage-requests/stage-request';
import type { ResultParts } from './settling';

/**
 * A result of an earlier attempt of `stage` (replaced by a trigger, a push or a newer attempt):
 * the call was made and billed, so its cost (or unpriced call) is the pipeline's (spec 2.2),
 * counted once per request id (a redelivery, or the same result on another replica, finds it
 * counted); the stage is not moved. A request id this pipeline never sent counts nothing.
 */
export async function ofReplacedAttempt(
  { deps }: ResultParts,
  pipeline: PipelineRecord,
  stage: Stage,
  current: StageRecord,
  result: GenerateResult,
  unpriced: boolean,
): Promise<void> {
  const attempt = attemptOf(result.request_id, pipeline._id, stage);
  if (attempt === null || attempt >= current.attempt) return;
  if (result.cost === null && !unpriced) return;
  if (pipeline.counted?.[result.request_id]) return;
  await deps.store.countLate(pipeline._id, result.request_id, result.cost, unpriced);
}

/**
 * A result of the stage's current attempt that finds the stage ended. A redelivery of the result
 * that ended it: nothing to do (its PackData is on the stage). A result after the sweeper (timeout) or a newer run
 * (superseded before its request went out) failed the stage, docs/decisions/0028: the stage stays
 * FAILED, but the call was made and billed, so its cost is the stage's and counts in the
 * pipeline's total, once per stage request (a redelivery finds `late_result` set).
 */
export async function afterItsEnd(
  { deps }: ResultParts,
  pipelineId: number,
  stage: Stage,
  current: StageRecord,
  result: GenerateResult,
  now: Date,
  unpriced: boolean,
): Promise<void> {
  if (current.state !== 'FAILED' || !endedWithoutResult(current) || current.late_result) return;
  const late = { ok: result.ok, cost: result.cost, unpriced: result.unpriced, received_at: now };
  await deps.store.move(
    pipelineId,
    stage,
    { states: ['FAILED'], request_id: result.request_id, no_late_result: true },
    { [stage]: { cost: result.cost, unpriced, late_result: late } },
    [],
    result.cost,
    unpriced,
  );
}

/** A stage ended by the sweeper (timeout) or by a newer run before its request went out. */
function endedWithoutResult(stage: StageRecord): boolean {
  return stage.error?.startsWith('timeout:') === true || stage.error?.startsWith('superseded:') === true;
}
