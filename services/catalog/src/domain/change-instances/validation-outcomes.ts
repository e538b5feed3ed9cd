import type { EventData, events } from '@pack/contracts';
import type { Logger } from '@pack/logging';
import { transitionOf } from './change-records';
import type { ChangeInstanceRecord } from '../model';
import { currentOrIgnored, decideUntilWritten, LOST_RACE } from './race-retry';
import { viewDeferred } from './roll-forward';
import type { CatalogStore } from '../store';

export type UndecidedNews = EventData<typeof events.changeInstanceValidationUndecided>;
export type UndecidedOutcome = 'applied' | 'stale' | 'ignored';

/**
 * A validation that ended without a decision (docs/decisions/0056): the instance records it as
 * its `validation` (`decision: null`, the reason, when), in whatever state it is, and changes
 * nothing else: it waits for its owner as without a validator. One record with no step, like a
 * pipeline progress that moves nothing (pipeline-progress.ts); a repeat finds it recorded.
 */
export class ValidationOutcomes {
  constructor(
    private readonly store: CatalogStore,
    private readonly logger: Logger,
  ) {}

  async undecided(news: UndecidedNews): Promise<UndecidedOutcome> {
    const id = news.change_instance_id;
    const at = new Date(news.at);
    return decideUntilWritten<UndecidedOutcome>(
      async () => {
        const current = await currentOrIgnored(this.store, this.logger, id, 'validator outcome');
        if (!current) return 'ignored';
        const { instance } = current;
        const known = instance.validation?.at;
        if (known !== undefined && new Date(known).getTime() >= at.getTime()) return 'stale';
        return (await this.record(instance, news.reason, at)) ? 'applied' : LOST_RACE;
      },
      () => new Error(`change instance ${id} kept changing while the validator outcome was recorded`),
    );
  }

  private async record(instance: ChangeInstanceRecord, reason: string, at: Date): Promise<boolean> {
    const now = new Date();
    const changed: ChangeInstanceRecord = {
      ...instance,
      validation: { decision: null, reason, at },
      updated_at: now,
      version: instance.version + 1,
    };
    if (!(await this.store.insertTransition(transitionOf(changed, [], now), []))) return false;
    await viewDeferred(this.logger, instance._id, () => this.store.updateChangeInstance(changed));
    return true;
  }
}
