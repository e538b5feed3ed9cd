import { RememberedPipelines } from '../src/data/remembered-pipelines';
import { draftPipeline } from '../src/domain/stage-requests/stage-request';
import type { PipelineRecord, StageState } from '../src/domain/records/pipeline-records';

const pipeline = (
  id: number,
  declarationChars: number,
  state: StageState | null = 'WAITING_FOR_RESPONSE',
) => {
  const draft: PipelineRecord = draftPipeline(
    id,
    { service_item_id: id, service_id: 1, declaration_id: 1, declaration_json: 'x'.repeat(declarationChars) },
    `origin-${id}`,
    new Date(),
  );
  draft.stages.CONFIG.state = state;
  return draft;
};

describe('the running pipelines a replica remembers', () => {
  it('keeps running pipelines only, and none too large to be worth it', () => {
    const kept = new RememberedPipelines();
    kept.keep(pipeline(1, 10));
    kept.keep(pipeline(2, 10, 'OK'));
    kept.keep(pipeline(3, 600 * 1024));
    expect([kept.get(1)?._id, kept.get(2), kept.get(3)]).toEqual([1, null, null]);
    kept.keep(pipeline(1, 10, 'FAILED'));
    expect([kept.get(1), kept.size]).toEqual([null, 0]);
  });

  it('drops the oldest once the pipelines held pass the 8 MB budget', () => {
    const kept = new RememberedPipelines();
    for (let id = 1; id <= 40; id += 1) kept.keep(pipeline(id, 400 * 1024));
    expect(kept.size).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(kept.get(1)).toBeNull();
    expect(kept.get(40)?._id).toBe(40);
    // The oldest still held, kept again, becomes the newest: the next one goes instead.
    const oldest = [...Array(40).keys()].map((i) => i + 1).find((id) => kept.get(id) !== null)!;
    kept.keep(kept.get(oldest)!);
    kept.keep(pipeline(41, 400 * 1024));
    expect([kept.get(oldest)?._id, kept.get(oldest + 1)?._id ?? null]).toEqual([oldest, null]);
  });
});
