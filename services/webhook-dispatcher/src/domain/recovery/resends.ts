import { randomUUID } from 'node:crypto';
import type { Principal, WebhookRecover, WebhookRecoveryView, WebhookTriggerResult } from '@pack/contracts';
import { ConflictError, NotFoundError } from '@pack/errors';
import type { RecoveryRecord, ResponseRecord, Trigger, WebhookRecord } from '../model';
import type { RecoveryStore } from './store';
import type { ResponseStore } from '../responses/store';
import type { ServiceStore } from '../webhooks/store';
import type { ResendFiring } from './resend-firing';
import { headerIdOf } from '../responses/response-record';
import type { Webhooks } from '../webhooks/webhooks';

export type ResendReason = 'manual' | 'recovery';

export interface ResendObserver {
  /** Resends recorded (new Webhook Responses), by why. */
  resent(reason: ResendReason, count: number): void;
}

/** What a recovery runner needs to hear: a recovery was started here, look now. */
export interface RecoveryKick {
  kick(): void;
}

/** The trigger that resends `original`: its body byte for byte, its first fire's webhook-id. */
export function resendTrigger(original: ResponseRecord, key: string, recoveryId: string | null): Trigger {
  return {
    key,
    mode: original.mode,
    body: original.body,
    change_instance_id: original.change_instance_id,
    event_at: new Date(),
    resend_of: { seq: original.seq, message_id: headerIdOf(original), recovery_id: recoveryId },
  };
}

/** Why a webhook takes no resend (409), or null. A deleted Service's webhooks are disabled too. */
export async function refusal(webhook: WebhookRecord, services: Pick<ServiceStore, 'find'>) {
  const service = await services.find(webhook.service_id);
  if (service?.deleted) return 'its Service was deleted';
  if (!webhook.enabled) return `the webhook is disabled (${webhook.disabled_reason ?? 'by its owner'})`;
  return null;
}

/** Resending one recorded response and recovering every FAILED fire of a window. */
export class Resends {
  constructor(
    private readonly access: Webhooks,
    private readonly services: Pick<ServiceStore, 'find'>,
    private readonly responses: Pick<ResponseStore, 'findBySeq' | 'countFailed'>,
    private readonly recoveries: Pick<RecoveryStore, 'start' | 'find'>,
    private readonly firing: Pick<ResendFiring, 'resend'>,
    private readonly runner: RecoveryKick,
    private readonly observer: ResendObserver,
  ) {}

  async resend(principal: Principal, webhookId: number, seq: number): Promise<WebhookTriggerResult> {
    const webhook = await this.usable(principal, webhookId);
    const original = await this.responses.findBySeq(webhookId, seq);
    if (!original) throw new NotFoundError(`Webhook ${webhookId} has no response ${seq}`);
    if (original.state !== 'OK' && original.state !== 'FAILED')
      throw new ConflictError(
        `response ${seq} is ${original.state}: it is still being delivered, resend it once it is OK or FAILED`,
      );
    const [resent] = await this.firing.resend(webhook, [resendTrigger(original, `r${randomUUID()}`, null)]);
    this.observer.resent('manual', 1);
    return { outcome: 'scheduled', response_id: resent!.seq };
  }

  async recover(
    principal: Principal,
    webhookId: number,
    input: WebhookRecover,
  ): Promise<{ created: boolean; view: WebhookRecoveryView }> {
    await this.usable(principal, webhookId);
    const now = new Date();
    const since = new Date(input.since);
    const asked = input.until === null ? null : new Date(input.until);
    const until = asked && asked < now ? asked : now;
    const id = `rcv_${randomUUID().replace(/-/g, '')}`;
    const total = await this.responses.countFailed({ webhookId, since, until });
    const record: RecoveryRecord = {
      _id: id,
      webhook_id: webhookId,
      running_key: `webhook:${webhookId}`,
      state: 'RUNNING',
      since,
      until,
      until_asked: asked,
      total,
      resent: 0,
      cursor: 0,
      reason: null,
      lease_until: null,
      lease_token: null,
      holder: null,
      created_by: principal.id,
      created_at: now,
      updated_at: now,
      finished_at: null,
    };
    const started = await this.recoveries.start(record);
    if (!started.created) {
      const running = started.recovery;
      const same =
        running.since.getTime() === since.getTime() &&
        (running.until_asked?.getTime() ?? null) === (asked?.getTime() ?? null);
      if (!same)
        throw new ConflictError(
          `recovery ${running._id} (since ${running.since.toISOString()}) is running for webhook ${webhookId}; one at a time per webhook`,
        );
      return { created: false, view: toRecoveryView(running) };
    }
    this.runner.kick();
    return { created: true, view: toRecoveryView(record) };
  }

  async recovery(principal: Principal, webhookId: number, id: string): Promise<WebhookRecoveryView> {
    await this.access.visible(principal, webhookId);
    const record = await this.recoveries.find(id);
    if (!record || record.webhook_id !== webhookId)
      throw new NotFoundError(`Webhook ${webhookId} has no recovery ${id}`);
    return toRecoveryView(record);
  }

  private async usable(principal: Principal, webhookId: number): Promise<WebhookRecord> {
    const webhook = await this.access.visible(principal, webhookId);
    const why = await refusal(webhook, this.services);
    if (why) throw new ConflictError(`webhook ${webhookId} takes no resends: ${why}`);
    return webhook;
  }
}

export function toRecoveryView(record: RecoveryRecord): WebhookRecoveryView {
  return {
    id: record._id,
    webhook: record.webhook_id,
    state: record.state,
    since: record.since.toISOString(),
    until: record.until.toISOString(),
    total: record.total,
    resent: record.resent,
    reason: record.reason,
    created_at: record.created_at.toISOString(),
    finished_at: record.finished_at?.toISOString() ?? null,
  };
}
