import type { Logger } from '@pack/logging';
import type { ResponseStore } from '../responses/store';

export interface RetentionSweepOptions {
  /** external_api.webhook_response_retention, read live. */
  retention: () => number;
  logger: Logger;
}

/**
 * Keeps every webhook to its retention. Each sweep trims the webhooks this replica delivered for
 * since the last one; and when the retention is lower than the one last applied (or on the first
 * sweep, which covers a change made while no replica ran), it trims every webhook holding more,
 * so a lowered cap shows within one sweep interval rather than at each webhook's next delivery.
 * Trims are idempotent: replicas that all notice the change at once do no harm.
 */
export class RetentionSweep {
  private readonly dirty = new Set<number>();
  private applied: number | null = null;

  constructor(
    private readonly responses: ResponseStore,
    private readonly options: RetentionSweepOptions,
  ) {}

  finishedFor(webhookId: number): void {
    this.dirty.add(webhookId);
  }

  async sweep(): Promise<void> {
    const keep = this.options.retention();
    if (this.applied === null || keep < this.applied) {
      try {
        for (const id of await this.responses.webhooksBeyond(keep)) this.dirty.add(id);
      } catch (error) {
        this.options.logger.warn({ err: error }, 'finding webhooks beyond the retention failed');
        await this.trimDirty(keep);
        return;
      }
    }
    this.applied = keep;
    await this.trimDirty(keep);
  }

  private async trimDirty(keep: number): Promise<void> {
    const ids = [...this.dirty];
    this.dirty.clear();
    for (const id of ids) {
      try {
        await this.responses.trim(id, keep);
      } catch (error) {
        this.dirty.add(id);
        this.options.logger.warn({ err: error, webhook_id: id }, 'trimming webhook responses failed');
      }
    }
  }
}
