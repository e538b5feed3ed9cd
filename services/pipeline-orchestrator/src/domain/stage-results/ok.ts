import { AI_PROCESSORS_OFF_NOTE } from '../records/ai-switches';
import { NEXT_STAGE, type PipelineRecord, type StageRecord } from '../records/pipeline-records';
import type { ProcessorRecord } from '../records/processor-records';
import { laterProcessor } from '../records/stage-kinds';
import { withStages } from '../stage-moves/progress';
import type { ResultParts, Settling } from './settling';

/**
 * A running stage's OK (rule 1 of spec 3.1): in one write with the stage's end, the next stage's
 * active processor starts (its request goes out at once), or the run ends COMPLETED (the last
 * stage, or no later stage has an active processor), or nothing starts and the next stage says
 * why (AI processors switched off, 0040; the Service's AI budget spent, 0046). `lookup` is the
 * next stage's active processor (the Pack Optimizer after the last stage), asked for early.
 */
export async function ok(
  parts: ResultParts,
  settling: Settling,
  lookup: Promise<ProcessorRecord | null>,
): Promise<'OK' | null> {
  const done: Partial<StageRecord> = { ...settling.ended, state: 'OK', error: null };
  return (await move(parts, settling, done, await lookup)) && 'OK';
}

async function move(
  { deps, moves }: ResultParts,
  { pipeline, stage, current, expect: running, result, unpriced }: Settling,
  done: Partial<StageRecord>,
  processor: ProcessorRecord | null,
): Promise<PipelineRecord | null> {
  const { cost } = result;
  const expect = { ...running, current: true };
  const next = NEXT_STAGE[stage];
  if (!next) {
    // The last stage: the run is COMPLETED, the Pack Optimizer (`processor`) asked.
    const events = await moves.finishing(withStages(pipeline, { [stage]: done }), 'COMPLETED', [], processor);
    return moves.endMove(pipeline._id, stage, expect, done, events, cost, unpriced, 'COMPLETED');
  }
  if (!processor) {
    // Nothing starts by itself after this stage: unless a later stage has an active processor
    // (its previous stage's PackData is then awaited from outside, rule 2), the run is over.
    const waiting = await laterProcessor(deps.nextProcessors, pipeline.service_id, next);
    // Over at this stage, the run lists as `done`; waiting for outside PackData, as `waiting`.
    const events = waiting
      ? []
      : await moves.finishing(withStages(pipeline, { [stage]: done }), 'COMPLETED', []);
    const ends = waiting ? null : 'COMPLETED';
    return moves.endMove(pipeline._id, stage, expect, done, events, cost, unpriced, ends);
  }
  if (!deps.switches.processors()) {
    // AI processors switched off (0040): the stage ends OK, the next one is not started and says why.
    const note = pipeline.stages[next].state === null ? { [next]: { error: AI_PROCESSORS_OFF_NOTE } } : {};
    return deps.store.move(pipeline._id, stage, expect, { [stage]: done, ...note }, [], cost, unpriced);
  }
  const exhausted = await deps.budget.exhausted(pipeline.service_id);
  if (exhausted !== null) {
    // The Service's AI budget is spent (0046): the stage ends OK, the next one is recorded FAILED
    // with the reason and the run ends, its Change Instance told why, in one write.
    const set = {
      [stage]: done,
      [next]: { state: 'FAILED' as const, error: exhausted, finished_at: done.finished_at ?? new Date() },
    };
    const events = await moves.finishing(withStages(pipeline, set), 'FAILED', [`${next}: ${exhausted}`]);
    const moved = await deps.store.move(pipeline._id, stage, expect, set, events, cost, unpriced);
    if (moved) await deps.requests.publishEnd(pipeline._id, events);
    return moved;
  }
  // The stage's OK and the next stage's request in one write: they cannot come apart.
  const withData = { ...pipeline, stages: { ...pipeline.stages, [stage]: { ...current, ...done } } };
  return moves.start(withData, next, processor, { [stage]: done }, { stage, expect, cost, unpriced });
}
