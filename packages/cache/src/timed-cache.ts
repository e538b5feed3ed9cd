import { BoundedCache } from './bounded-cache';

/** Entries a loading cache keeps unless told otherwise. */
export const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * What a replica keeps of a slow lookup for `ttlMs`, at most `maxEntries` keys: simultaneous
 * misses of a key share one load, a failed load is not kept, and `forget` drops a key at once (a
 * change this replica made or heard of; a load already under way is not kept either). With
 * `ttlMs` 0 every call loads.
 */
export class TimedCache<K extends NonNullable<unknown>, V> {
  private readonly entries: BoundedCache<K, Promise<V>>;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    maxEntries = DEFAULT_MAX_ENTRIES,
  ) {
    this.entries = new BoundedCache({ maxEntries, ttlMs, now });
  }

  get(key: K, load: () => Promise<V>): Promise<V> {
    if (this.ttlMs <= 0) return load();
    const kept = this.entries.get(key);
    if (kept) return kept;
    const fresh = load();
    this.entries.set(key, fresh, { at: this.now() });
    fresh.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    return fresh;
  }

  forget(key: K): void {
    this.entries.delete(key);
  }

  /** Every key that `match` picks. */
  forgetWhere(match: (key: K) => boolean): void {
    this.entries.deleteWhere(match);
  }

  clear(): void {
    this.entries.clear();
  }
}
