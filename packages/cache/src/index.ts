interface Entry<V> {
  value: Promise<V>;
  at: number;
}

/**
 * What a replica keeps of a slow lookup for `ttlMs`: simultaneous misses of a key share one load,
 * a failed load is not kept, and `forget` drops a key at once (a change this replica made or
 * heard of). With `ttlMs` 0 every call loads.
 */
export class TimedCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K, load: () => Promise<V>): Promise<V> {
    if (this.ttlMs <= 0) return load();
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.at < this.ttlMs) return entry.value;
    const fresh = { value: load(), at: this.now() };
    this.entries.set(key, fresh);
    fresh.value.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    return fresh.value;
  }

  forget(key: K): void {
    this.entries.delete(key);
  }

  /** Every key that `match` picks. */
  forgetWhere(match: (key: K) => boolean): void {
    for (const key of this.entries.keys()) if (match(key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
