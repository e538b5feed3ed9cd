import { BoundedCache } from '@pack/cache';
import type { Principal } from '@pack/contracts';

/**
 * Token hash -> principal (or null for an unknown or revoked token). At most `maxEntries`, the
 * least recently used dropped first. Revocations evict entries explicitly, so the TTL only bounds
 * how long a role change takes to show and how long an unknown token is remembered.
 */
export class TokenCache {
  private readonly entries: BoundedCache<string, Principal | null>;

  constructor(
    maxEntries = 50_000,
    ttlMs = 5 * 60_000,
    private readonly negativeTtlMs = 60_000,
  ) {
    this.entries = new BoundedCache({ maxEntries, ttlMs });
  }

  get(hash: string, now = Date.now()): Principal | null | undefined {
    return this.entries.get(hash, now);
  }

  /** `expiresAt` (ms): an expiring token is never served from the cache past its expiry. */
  set(hash: string, principal: Principal | null, now = Date.now(), expiresAt = Infinity): void {
    this.entries.set(hash, principal, {
      at: now,
      expiresAt,
      ...(principal ? {} : { ttlMs: this.negativeTtlMs }),
    });
  }

  evict(hash: string): void {
    this.entries.delete(hash);
  }

  get size(): number {
    return this.entries.size;
  }
}
