import { randomUUID } from 'node:crypto';
import type { Principal } from '@pack/contracts';
import { ConflictError } from '@pack/errors';
import type { ExecutionContextStore } from './store';
import type { PipelineRecord } from '../records/pipeline-records';
import type { PipelineStore } from '../records/store';
import type { ActiveProcessors } from '../records/processor-records';
import type { Pipelines } from './pipelines';

export interface RetriggerDeps {
  pipelines: Pipelines;
  store: PipelineStore;
  processors: ActiveProcessors;
  context: ExecutionContextStore;
}

/**
 * Endpoint 4 (spec endpoint rule 3, 3.1 rule 4): a new run from CONFIG that keeps the item's
 * execution context. The feedback is kept as a note on the latest run first, so this run's CONFIG
 * prompt and every later one see it.
 */
export class Retrigger {
  constructor(private readonly deps: RetriggerDeps) {}

  async retrigger(principal: Principal, serviceItemId: number, feedback?: string): Promise<PipelineRecord> {
    const { pipelines, store, processors, context } = this.deps;
    const item = await pipelines.visibleItem(principal, serviceItemId);
    await pipelines.requireNotCancelled(item, 'a retrigger');
    pipelines.requireAiProcessors('a retrigger');
    await pipelines.requireBudget(item.service_id, 'a retrigger');
    const processor = await processors.active(item.service_id, 'config');
    if (!processor)
      throw new ConflictError('the Service has no active config processor to run the CONFIG stage');
    if (feedback !== undefined && feedback.trim() !== '') {
      const latest = await store.latest(serviceItemId);
      await context.addNote({
        _id: `feedback:${randomUUID()}`,
        service_item_id: serviceItemId,
        kind: 'feedback',
        run: latest?.run ?? 0,
        text: feedback.trim(),
        created_at: new Date(),
      });
    }
    const started = await pipelines.startRun(item, processor, `retrigger:${randomUUID()}`);
    // A fresh origin never collides; null would mean the store refused a unique uuid.
    if (!started) throw new ConflictError('the pipeline could not be restarted; try again');
    return started;
  }
}
