import { BoundedCache } from '@pack/cache';
import type { Logger } from '@pack/logging';
import type { WebhookRecord } from '../model';

/** A write to webhooks, as every replica hears of it (contract event webhooks.webhook.changed.v1). */
export interface WebhookChange {
  service_id: number;
  /** null: every webhook of the Service (its owner changed). */
  webhook_id: number | null;
  /** The webhook's version after the change; null for a deletion or a change of every webhook. */
  version: number | null;
  deleted: boolean;
}

/** Where the webhook writes go: `changed` is awaited before the write is answered. */
export interface WebhookChangeSink {
  changed(change: WebhookChange): Promise<void>;
}

export type LookupResult = 'hit' | 'miss' | 'shared' | 'bypass';

export interface WebhookLookupOptions {
  /** How long a Service's list is kept; 0 disables the cache (a query per event). */
  ttlMs: number;
  /**
   * True while this replica hears the other replicas' changes (its broadcast queue is bound);
   * otherwise every lookup queries and nothing is kept.
   */
  listening: () => boolean;
  /** Services kept at most (the least recently used entry goes first). Default 10,000. */
  maxServices?: number;
  observe?: (result: LookupResult) => void;
  now?: () => number;
}

interface Flight {
  promise: Promise<WebhookRecord[]>;
  /** False once a change of the Service was heard while the query ran: its answer is not kept. */
  keep: boolean;
}

/**
 * The enabled webhooks of a Service, per replica (docs/decisions/0031). An entry lives `ttlMs`
 * from the start of the query that filled it and is forgotten at once when a change of the
 * Service is heard (this replica's own writes, the other replicas' broadcast); on a broker
 * (re)connection everything is forgotten, since changes announced meanwhile were lost.
 * Simultaneous misses of one Service share one query; a query that a change overtook serves the
 * callers that were already waiting for it (they came before the change) and is not kept.
 */
export class WebhookLookup {
  private readonly entries: BoundedCache<number, WebhookRecord[]>;
  /** Queries under way (not a cache: each leaves when it settles). */
  private readonly flights = new Map<number, Flight>();

  constructor(
    private readonly load: (serviceId: number) => Promise<WebhookRecord[]>,
    private readonly options: WebhookLookupOptions,
  ) {
    this.entries = new BoundedCache({
      maxEntries: options.maxServices ?? 10_000,
      ttlMs: options.ttlMs,
      now: () => this.now(),
    });
  }

  enabledFor(serviceId: number): Promise<WebhookRecord[]> {
    if (this.options.ttlMs <= 0 || !this.options.listening()) {
      this.options.observe?.('bypass');
      return this.load(serviceId);
    }
    const now = this.now();
    const kept = this.entries.get(serviceId, now);
    if (kept) {
      this.options.observe?.('hit');
      return Promise.resolve(kept);
    }
    const flying = this.flights.get(serviceId);
    if (flying) {
      this.options.observe?.('shared');
      return flying.promise;
    }
    this.options.observe?.('miss');
    const flight: Flight = { keep: true, promise: this.load(serviceId) };
    this.flights.set(serviceId, flight);
    flight.promise
      .then(
        (webhooks) => {
          if (flight.keep && this.options.listening()) this.store(serviceId, webhooks, now);
        },
        () => undefined, // the caller sees the error; nothing is kept
      )
      .finally(() => {
        if (this.flights.get(serviceId) === flight) this.flights.delete(serviceId);
      });
    return flight.promise;
  }

  /** The Service's webhooks changed: the next lookup queries. */
  forget(serviceId: number): void {
    this.entries.delete(serviceId);
    const flight = this.flights.get(serviceId);
    if (flight) {
      flight.keep = false;
      this.flights.delete(serviceId);
    }
  }

  /** Changes may have been missed (a broker reconnection): every lookup queries again. */
  clear(): void {
    this.entries.clear();
    for (const flight of this.flights.values()) flight.keep = false;
    this.flights.clear();
  }

  private store(serviceId: number, webhooks: WebhookRecord[], at: number): void {
    this.entries.set(serviceId, webhooks, { at });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/**
 * Webhooks by id for fires sent later (retries, windows, claims): a fire names the webhook version
 * it was made with, so a cached copy older than that is refetched; a heard change drops the copy.
 * At most `maxEntries` webhooks (least recently used dropped first), each for `ttlMs`; a miss is
 * not kept (a webhook created later is read at once).
 */
export class WebhookById {
  private readonly entries: BoundedCache<number, WebhookRecord>;
  /** Changes heard so far: a read that one overtook is not kept. */
  private heard = 0;

  constructor(
    private readonly find: (id: number) => Promise<WebhookRecord | null>,
    ttlMs = 1000,
    maxEntries = 10_000,
  ) {
    this.entries = new BoundedCache({ maxEntries, ttlMs });
  }

  async get(id: number, minVersion: number): Promise<WebhookRecord | null> {
    const hit = this.entries.get(id);
    if (hit && hit.version >= minVersion) return hit;
    const heard = this.heard;
    const at = Date.now();
    const record = await this.find(id);
    if (heard !== this.heard) return record;
    if (record) this.entries.set(id, record, { at });
    else this.entries.delete(id);
    return record;
  }

  forget(id: number): void {
    this.heard += 1;
    this.entries.delete(id);
  }

  clear(): void {
    this.heard += 1;
    this.entries.clear();
  }
}

/**
 * Webhook writes and the caches: a write of this replica is forgotten here at once and announced
 * to every replica (this one too) before it is answered; an announcement that fails is logged,
 * and the other replicas see the change when their entry expires (WEBHOOK_LOOKUP_CACHE_MS).
 */
export class WebhookChanges implements WebhookChangeSink {
  constructor(
    private readonly lookup: WebhookLookup,
    private readonly byId: WebhookById,
    private readonly announce: (change: WebhookChange) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  async changed(change: WebhookChange): Promise<void> {
    this.heard(change);
    try {
      await this.announce(change);
    } catch (error) {
      this.logger.warn(
        { err: error, service_id: change.service_id, webhook_id: change.webhook_id },
        'webhook change not announced; other replicas see it once their cached lookup expires',
      );
    }
  }

  /** A change announced by any replica, this one included. */
  heard(change: WebhookChange): void {
    this.lookup.forget(change.service_id);
    if (change.webhook_id === null) this.byId.clear();
    else this.byId.forget(change.webhook_id);
  }

  /** Announcements may have been lost (a broker reconnection). */
  forgetAll(): void {
    this.lookup.clear();
    this.byId.clear();
  }
}
