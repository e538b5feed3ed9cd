import type { WebhookHealth, PageStart } from '@pack/contracts';
import type { Page, ServiceRecord, WebhookRecord } from '../model';

/** The webhooks and the Services they belong to, as the use cases need them; data/webhook-repository.ts implements it. */
export interface WebhookStore {
  nextId(): Promise<number>;
  /** Inserts the webhook and its empty schedule. */
  insert(record: WebhookRecord): Promise<void>;
  find(id: number): Promise<WebhookRecord | null>;
  list(ownerId: number | null, limit: number, start: PageStart): Promise<Page<WebhookRecord>>;
  /** The webhook after the change (its version increased); null when it is gone. */
  update(id: number, set: Partial<WebhookRecord>): Promise<WebhookRecord | null>;
  /** The same, only if the stored version is still `version`; null otherwise (or when it is gone). */
  updateIf(id: number, version: number, set: Partial<WebhookRecord>): Promise<WebhookRecord | null>;
  /** Removes the webhook, its schedule and its responses; false when there was none. */
  remove(id: number): Promise<boolean>;
  /** The enabled webhooks of a Service (cached per replica by WebhookLookup, 0031). */
  enabledFor(serviceId: number): Promise<WebhookRecord[]>;
  /** The ids of an owner's webhooks. */
  idsOwnedBy(ownerId: number): Promise<number[]>;
  /** Disables the Service's enabled webhooks with `reason` (the Service was deleted); how many changed. */
  disableForService(serviceId: number, reason: string): Promise<number>;
  /**
   * Gives the Service's webhooks to its new owner, clearing their authorization (it was the old
   * owner's, given for a URL the new owner may change; 0014); a rename of the owner only renames.
   * How many changed.
   */
  reassign(serviceId: number, owner: { id: number; name: string }): Promise<number>;
}

export interface ServiceStore {
  find(id: number): Promise<ServiceRecord | null>;
  /** The names of those of the Services the projection holds (a list shows them; no catalog call). */
  names(ids: number[]): Promise<Map<number, string>>;
  /** Keeps the record unless one of a higher version is stored already; true when it was applied. */
  apply(record: ServiceRecord): Promise<boolean>;
}

/** What a webhook's kept responses say of its deliveries; data/response-health.ts implements it. */
export interface HealthStore {
  /** The health of each webhook asked about (one with no responses: never fired). */
  healthOf(webhookIds: number[]): Promise<Map<number, WebhookHealth>>;
}
