import type { Logger } from '@pack/logging';
import { currentInstance } from './change-records';
import type { ChangeInstanceRecord } from '../model';
import type { CatalogStore } from '../store';

/**
 * Keeps the change instance view (what lists read) in step with the transition records. The
 * request that records a change updates the view itself; this catches up a view whose request
 * died in between, creating it if the submission never got to insert it (docs/decisions/0007).
 */
export class ChangeInstanceViews {
  constructor(
    private readonly store: CatalogStore,
    private readonly logger: Logger,
  ) {}

  /** Idempotent; null for an instance that does not exist. */
  async rollForward(id: number): Promise<ChangeInstanceRecord | null> {
    const [view, records] = await Promise.all([
      this.store.findChangeInstance(id),
      this.store.transitionsOf(id),
    ]);
    const instance = currentInstance(records);
    if (!instance) return null;
    if (!view) {
      await this.store.insertChangeInstance(instance);
      this.logger.info({ change_instance_id: id }, 'change instance view created from its records');
    } else if (view.version < instance.version) {
      await this.store.updateChangeInstance(instance);
    }
    return instance;
  }
}

/** The change is committed already; if updating the view fails, the next roll-forward does it. */
export async function viewDeferred(logger: Logger, id: number, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    logger.warn(
      { err: error, change_instance_id: id },
      'change instance view update deferred to the roll-forward',
    );
  }
}
