import { BoundedCache } from '@pack/cache';
import type { Logger } from '@pack/logging';
import { contextOf, inSpan, trace } from '@pack/tracing';
import { BreakerOpenError, type Breakers } from './breakers';
import { retryDelayMs, verdictOf, type RetryPolicy } from './delivery-rules';
import type { AttemptRecord, ResponseRecord, WebhookRecord } from '../model';
import type { ResponseStore } from '../responses/store';
import type { Sender, SendResult } from './sender';
import type { WebhookStore } from '../webhooks/store';
import { headerIdOf } from '../responses/response-record';
import { scrubSecrets, secretPart } from './scrub';
import { standardWebhookHeaders } from './signature';
import type { WebhookChangeSink } from '../webhooks/webhook-lookup';
import type { SecretCodec } from '../webhooks/webhooks';

export type DeliveryOutcome = 'ok' | 'failed' | 'retry' | 'disabled' | 'waiting' | 'lease_lost';

export interface DeliveryObserver {
  attempted(): void;
  finished(outcome: DeliveryOutcome, latencyMs: number | null): void;
}

export interface DeliveryOptions {
  policy: RetryPolicy;
  timeoutMs: number;
  /** The fire's webhook at least at the version the fire was made with (cached). */
  webhookOf: (id: number, minVersion: number) => Promise<WebhookRecord | null>;
  /** A finished fire: its webhook's responses may need trimming to the retention. */
  finishedFor: (webhookId: number) => void;
  /** The 410 auto-disable is a webhook write: every replica's cache forgets it (0031). */
  changes: WebhookChangeSink;
  logger: Logger;
}

/** Sends one fire (one attempt) and records what came of it. */
export class Delivery {
  constructor(
    private readonly responses: ResponseStore,
    private readonly webhooks: WebhookStore,
    private readonly sender: Sender,
    private readonly breakers: Breakers,
    private readonly codec: SecretCodec,
    private readonly options: DeliveryOptions,
    private readonly observer: DeliveryObserver,
  ) {}

  /**
   * `answered` is called once the target has answered (or was not called), before the result is
   * written: the scheduler may then give the slot to another fire.
   */
  deliver(
    record: ResponseRecord,
    token: string,
    known?: WebhookRecord,
    answered: () => void = () => undefined,
  ): Promise<DeliveryOutcome> {
    // In the trace of the event that fired it (stored with the fire), whenever the attempt runs.
    return inSpan(
      'webhook delivery',
      {
        parent: contextOf(record.trace),
        attributes: {
          'pack.webhook.id': record.webhook_id,
          'pack.webhook.response_id': record._id,
          'pack.webhook.attempt': record.attempt_count + 1,
          'pack.webhook.mode': record.mode,
        },
      },
      async (span) => {
        const outcome = await this.attempt(record, token, known, answered);
        span.setAttribute('pack.webhook.outcome', outcome);
        return outcome;
      },
    );
  }

  private async attempt(
    record: ResponseRecord,
    token: string,
    known: WebhookRecord | undefined,
    answered: () => void,
  ): Promise<DeliveryOutcome> {
    const webhook = known ?? (await this.options.webhookOf(record.webhook_id, record.webhook_version));
    if (!webhook || !webhook.enabled) {
      answered();
      const error = webhook ? 'the webhook is disabled' : 'the webhook was deleted';
      return this.fail(record, token, null, error);
    }
    const body = JSON.stringify(record.body);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'pack-webhook-dispatcher/0.1',
      ...standardWebhookHeaders(this.secretOf(webhook, 'secret'), headerIdOf(record), body),
    };
    const authorization = this.secretOf(webhook, 'authorization');
    if (authorization) headers.authorization = authorization;

    const started = Date.now();
    let result: SendResult;
    try {
      result = await this.breakers.send(
        webhook._id,
        (sent) => !sent.refused && verdictOf(sent.status) === 'retry',
        () => this.sender.send(webhook.target_url, headers, body, this.options.timeoutMs),
      );
    } catch (error) {
      if (!(error instanceof BreakerOpenError)) throw error;
      answered();
      // Not an attempt: the target is left alone and the fire waits for the breaker.
      const due = new Date(Date.now() + this.breakers.resetTimeoutMs);
      await this.responses.reschedule(record._id, token, due, null);
      this.observer.finished('waiting', null);
      return 'waiting';
    }
    answered();
    this.observer.attempted();
    if (result.status !== null)
      trace.getActiveSpan()?.setAttribute('http.response.status_code', result.status);
    // What the target answered is shown to the owner: without any piece of the webhook's secrets.
    const secrets = [secretPart(authorization), this.secretOf(webhook, 'secret').replace(/^whsec_/, '')];
    const attempt: AttemptRecord = {
      at: new Date(started),
      status_code: result.status,
      error: result.error === null ? null : scrubSecrets(result.error, secrets),
      duration_ms: Date.now() - started,
    };
    const answer = {
      status_code: result.status,
      response_body: result.status === null ? null : scrubSecrets(result.body, secrets),
      response_truncated: result.truncated,
      // No answer (refused, network error, timeout): why, apart from the target's body.
      error: result.status === null ? result.error : null,
    };
    const verdict = result.refused ? 'failed' : verdictOf(result.status);
    switch (verdict) {
      case 'ok':
        return this.settle(record, token, 'ok', { state: 'OK', ...answer }, attempt);
      case 'gone':
        const disabled = await this.webhooks.update(webhook._id, {
          enabled: false,
          disabled_reason: 'the target answered 410 Gone',
          updated_at: new Date(),
        });
        await this.options.changes.changed({
          service_id: webhook.service_id,
          webhook_id: webhook._id,
          version: disabled?.version ?? null,
          deleted: disabled === null,
        });
        this.options.logger.warn({ webhook_id: webhook._id }, 'webhook disabled: its target answered 410');
        return this.settle(record, token, 'disabled', { state: 'FAILED', ...answer }, attempt);
      case 'failed':
        return this.settle(record, token, 'failed', { state: 'FAILED', ...answer }, attempt);
      case 'retry': {
        const attempts = record.attempt_count + 1;
        if (attempts >= this.options.policy.maxAttempts)
          return this.settle(record, token, 'failed', { state: 'FAILED', ...answer }, attempt);
        const delay = retryDelayMs(this.options.policy, attempts, result.retryAfter);
        const kept = await this.responses.reschedule(
          record._id,
          token,
          new Date(Date.now() + delay),
          attempt,
        );
        this.observer.finished(kept ? 'retry' : 'lease_lost', null);
        return kept ? 'retry' : 'lease_lost';
      }
    }
  }

  private async fail(record: ResponseRecord, token: string, attempt: AttemptRecord | null, error: string) {
    // Never sent: no answer of the target to show (spec 2.7), the dispatcher's reason apart.
    const set = { state: 'FAILED' as const, response_body: null, status_code: null, error };
    return this.settle(record, token, 'failed', set, attempt);
  }

  private async settle(
    record: ResponseRecord,
    token: string,
    outcome: DeliveryOutcome,
    set: Partial<ResponseRecord>,
    attempt: AttemptRecord | null,
  ): Promise<DeliveryOutcome> {
    if (!(await this.responses.finish(record._id, token, set, attempt))) {
      this.observer.finished('lease_lost', null);
      return 'lease_lost';
    }
    this.observer.finished(outcome, Date.now() - record.event_at.getTime());
    this.options.finishedFor(record.webhook_id);
    return outcome;
  }

  /**
   * Decrypted once per ciphertext: the hot path does no AES work for a webhook seen before. A
   * ciphertext never changes meaning, so no write invalidates it and it has no time to live; at
   * most 10,000, the least recently used dropped first.
   */
  private readonly plaintexts = new BoundedCache<string, string>({ maxEntries: 10_000, ttlMs: Infinity });

  private secretOf(webhook: WebhookRecord, field: 'authorization' | 'secret'): string {
    const stored = webhook[field];
    if (stored === '') return '';
    const cached = this.plaintexts.get(stored);
    if (cached !== undefined) return cached;
    const plain = this.codec.open(webhook._id, field, stored) ?? '';
    this.plaintexts.set(stored, plain);
    return plain;
  }
}
