import type { Connection } from 'mongoose';
import type { WebhookHealth } from '@pack/contracts';
import type { ResponseRecord } from '../domain/model';
import type { HealthStore } from '../domain/webhooks/store';
import { RESPONSES } from './response-repository';

const NEVER_FIRED: WebhookHealth = {
  last_state: null,
  last_at: null,
  failures_in_row: 0,
  failing_since: null,
};

/**
 * A webhook's health read from its kept responses: the newest one, the newest OK one, and the
 * FAILED ones after it. Each read is a walk of the webhook_seq index from one end, so a list page
 * costs a few index reads per webhook, whatever its history; nothing is kept in step with
 * deliveries that could drift from the responses themselves.
 */
export class ResponseHealth implements HealthStore {
  private readonly responses;

  constructor(connection: Connection) {
    this.responses = connection.collection<ResponseRecord>(RESPONSES);
  }

  async healthOf(webhookIds: number[]): Promise<Map<number, WebhookHealth>> {
    const entries = await Promise.all(webhookIds.map(async (id) => [id, await this.one(id)] as const));
    return new Map(entries);
  }

  private async one(webhookId: number): Promise<WebhookHealth> {
    const byNewest = { sort: { seq: -1 as const } };
    const [newest, newestOk] = await Promise.all([
      this.responses.findOne(
        { webhook_id: webhookId },
        { ...byNewest, projection: { state: 1, updated_at: 1 } },
      ),
      this.responses.findOne({ webhook_id: webhookId, state: 'OK' }, { ...byNewest, projection: { seq: 1 } }),
    ]);
    if (!newest) return NEVER_FIRED;
    const failed = { webhook_id: webhookId, state: 'FAILED' as const, seq: { $gt: newestOk?.seq ?? 0 } };
    const [failures, first] = await Promise.all([
      this.responses.countDocuments(failed),
      this.responses.findOne(failed, { sort: { seq: 1 }, projection: { due_at: 1 } }),
    ]);
    return {
      last_state: newest.state,
      last_at: newest.updated_at.toISOString(),
      failures_in_row: failures,
      failing_since: failures > 0 && first ? first.due_at.toISOString() : null,
    };
  }
}
