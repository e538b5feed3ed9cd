import { ConflictError } from '@pack/errors';
import {
  cancelledReason,
  type ChangeInstanceNews,
  type RunCancellation,
  type ServiceItemRecord,
} from '../records/pipeline-records';
import type { PipelineDeps } from '../stage-moves/pipeline-deps';

/**
 * A Change Instance CANCELLED (docs/decisions/0055): remembered first, then every run working on
 * it is marked. A run inserted meanwhile is either found by the marking, or finds the
 * cancellation itself right after its insert (`Pipelines.startRun`), so none is missed.
 */
export async function cancelRuns(
  deps: Pick<PipelineDeps, 'items' | 'store'>,
  news: ChangeInstanceNews,
): Promise<void> {
  await deps.items.cancel(news.change_instance_id, news.service_item_id, new Date());
  // The first time the cancellation was heard is kept: a redelivery marks with the same values.
  const cancelled: RunCancellation = (await deps.items.cancellation(news.change_instance_id)) ?? {
    change_instance_id: news.change_instance_id,
    at: new Date(),
    reason: cancelledReason(news.change_instance_id),
  };
  await deps.store.cancelRuns(news.service_item_id, cancelled);
}

/**
 * 409 naming the state when the item's latest approved declaration belongs to a CANCELLED Change
 * Instance: nothing is started for it (a new declaration, once approved, can run).
 */
export async function requireNotCancelled(
  deps: Pick<PipelineDeps, 'items'>,
  item: ServiceItemRecord,
  what: string,
): Promise<void> {
  if (item.change_instance_id === undefined) return;
  if (await deps.items.cancellation(item.change_instance_id)) throw cancelledConflict(item, what);
}

export function cancelledConflict(item: ServiceItemRecord, what: string): ConflictError {
  return new ConflictError(
    `${what} is refused: Change Instance ${item.change_instance_id} of the Service Item's latest approved declaration is CANCELLED, so nothing runs for it; submit a new declaration`,
  );
}
