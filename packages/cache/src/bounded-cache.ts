import { LRUCache } from 'lru-cache';

export interface CacheBound<K, V> {
  /** Entries kept at most; past it the least recently used goes first. */
  maxEntries: number;
  /** How long an entry is served after it was stored (Infinity: until a write or the bound drops it). */
  ttlMs: number;
  /** A budget in units of `sizeOf` (characters, bytes) the entries may hold together. */
  maxSize?: number;
  sizeOf?: (value: V, key: K) => number;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * The one cache type: bounded by entries (and optionally a size budget) on lru-cache, each entry
 * served until its expiry. The expiry is checked here, not by lru-cache's `ttl`, so that an
 * injected clock may start at 0 and an entry is stale at exactly `ttlMs` (lru-cache treats a
 * start time of 0 as "no TTL" and an age equal to the TTL as fresh).
 */
export class BoundedCache<K extends NonNullable<unknown>, V> {
  private readonly lru: LRUCache<K, Entry<V>>;
  private readonly now: () => number;

  constructor(private readonly bound: CacheBound<K, V>) {
    this.now = bound.now ?? Date.now;
    const { sizeOf, maxSize } = bound;
    this.lru = new LRUCache<K, Entry<V>>({
      max: bound.maxEntries,
      ...(maxSize !== undefined && sizeOf
        ? {
            maxSize,
            maxEntrySize: maxSize,
            sizeCalculation: (entry, key) => Math.max(1, Math.ceil(sizeOf(entry.value, key))),
          }
        : {}),
    });
  }

  /** The value while it is fresh at `now`; a stale one is dropped. */
  get(key: K, now = this.now()): V | undefined {
    const entry = this.lru.get(key);
    if (!entry) return undefined;
    if (now < entry.expiresAt) return entry.value;
    this.lru.delete(key);
    return undefined;
  }

  /**
   * Stores `value`, its age counted from `at` (default now); `expiresAt` shortens its life (a
   * token that expires sooner), `ttlMs` replaces the cache's for this entry (a shorter life for
   * a miss).
   */
  set(key: K, value: V, options: { at?: number; ttlMs?: number; expiresAt?: number } = {}): void {
    const at = options.at ?? this.now();
    const expiresAt = Math.min(at + (options.ttlMs ?? this.bound.ttlMs), options.expiresAt ?? Infinity);
    this.lru.set(key, { value, expiresAt });
  }

  delete(key: K): void {
    this.lru.delete(key);
  }

  /** Every key that `match` picks. */
  deleteWhere(match: (key: K) => boolean): void {
    for (const key of [...this.lru.keys()]) if (match(key)) this.lru.delete(key);
  }

  clear(): void {
    this.lru.clear();
  }

  /** Entries held (fresh or not yet found stale). */
  get size(): number {
    return this.lru.size;
  }

  /** Sum of `sizeOf` over the entries held (0 without a size budget). */
  get heldSize(): number {
    return this.lru.calculatedSize ?? 0;
  }
}
