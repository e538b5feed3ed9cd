import type { Principal, WebhookResponseState, WebhookResponseView, PageStart } from '@pack/contracts';
import { NotFoundError, TooManyRequestsError } from '@pack/errors';
import type { Page, ResponseRecord } from '../model';
import type { ResponseStore, WindowCounter } from './store';
import type { WebhookStore } from '../webhooks/store';
import type { Webhooks } from '../webhooks/webhooks';

const MINUTE_MS = 60_000;

/** Reading the Webhook Responses of a webhook, within webhook_response_rate_limit per minute per caller. */
export class Responses {
  constructor(
    private readonly responses: ResponseStore,
    private readonly access: Webhooks,
    private readonly webhooks: Pick<WebhookStore, 'idsOwnedBy'>,
    private readonly counter: WindowCounter,
    private readonly limit: () => number,
  ) {}

  async list(
    principal: Principal,
    webhookId: number,
    limit: number,
    start: PageStart,
    filter: { state?: WebhookResponseState; resend?: boolean } = {},
  ): Promise<Page<WebhookResponseView>> {
    await this.admit(principal);
    await this.access.visible(principal, webhookId);
    const page = await this.responses.list(webhookId, limit, start, filter);
    return { count: page.count, items: page.items.map(toResponseView) };
  }

  async get(principal: Principal, webhookId: number, seq: number): Promise<WebhookResponseView> {
    await this.admit(principal);
    await this.access.visible(principal, webhookId);
    const record = await this.responses.findBySeq(webhookId, seq);
    if (!record) throw new NotFoundError(`Webhook ${webhookId} has no response ${seq}`);
    return toResponseView(record);
  }

  /** Across the caller's webhooks (an admin's: all), newest first; one webhook's when `webhook` is given. */
  async listAcross(
    principal: Principal,
    filter: { webhook?: number; state?: WebhookResponseState; resend?: boolean },
    limit: number,
    start: PageStart,
  ): Promise<Page<WebhookResponseView>> {
    await this.admit(principal);
    let webhookIds: number[] | null = null;
    if (filter.webhook !== undefined) {
      await this.access.visible(principal, filter.webhook);
      webhookIds = [filter.webhook];
    } else if (principal.role !== 'admin') webhookIds = await this.webhooks.idsOwnedBy(principal.id);
    const { state, resend } = filter;
    const page = await this.responses.listAcross({ webhookIds, state, resend }, limit, start);
    return { count: page.count, items: page.items.map(toResponseView) };
  }

  /** By its message id (the webhook-id header), within the caller's webhooks. */
  async getByMessageId(principal: Principal, messageId: string): Promise<WebhookResponseView> {
    await this.admit(principal);
    const record = await this.responses.find(messageId);
    const missing = () => new NotFoundError(`No Webhook Response ${messageId} among those of your webhooks`);
    if (!record) throw missing();
    await this.access.visible(principal, record.webhook_id).catch((error: unknown) => {
      throw error instanceof NotFoundError ? missing() : error;
    });
    return toResponseView(record);
  }

  /** A fixed one-minute window per caller, counted in the database so replicas share it. */
  private async admit(principal: Principal): Promise<void> {
    const now = Date.now();
    const window = Math.floor(now / MINUTE_MS);
    const end = (window + 1) * MINUTE_MS;
    const count = await this.counter.hit(`responses:${principal.id}`, window, new Date(end + MINUTE_MS));
    if (count > this.limit()) {
      const retryAfter = Math.max(1, Math.ceil((end - now) / 1000));
      throw new TooManyRequestsError(
        `at most ${this.limit()} webhook response reads per minute (webhook_response_rate_limit)`,
        { headers: { 'retry-after': String(retryAfter) } },
      );
    }
  }
}

export function toResponseView(record: ResponseRecord): WebhookResponseView {
  return {
    id: record.seq,
    webhook: record.webhook_id,
    state: record.state,
    mode: record.mode,
    change_instance_id: record.change_instance_id,
    message_id: record._id,
    request_body: record.body,
    status_code: record.status_code,
    response_body: record.response_body,
    response_truncated: record.response_truncated,
    error: record.error ?? null,
    resend_of: record.resend_of
      ? {
          id: record.resend_of.seq,
          message_id: record.resend_of.message_id,
          recovery_id: record.resend_of.recovery_id,
        }
      : null,
    attempts: record.attempts.map((attempt) => ({
      at: attempt.at.toISOString(),
      status_code: attempt.status_code,
      error: attempt.error,
      duration_ms: attempt.duration_ms,
    })),
    scheduled_for: record.due_at.toISOString(),
    created_at: record.created_at.toISOString(),
    updated_at: record.updated_at.toISOString(),
  };
}
