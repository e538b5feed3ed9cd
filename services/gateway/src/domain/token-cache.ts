import type { Principal } from '@pack/contracts';

interface Entry {
  principal: Principal | null;
  expiresAt: number;
}

/**
 * Token hash -> principal (or null for an unknown or revoked token). Bounded; the oldest entry
 * goes first. Revocations evict entries explicitly, so the TTL only bounds how long a role
 * change takes to show and how long an unknown token is remembered.
 */
export class TokenCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries = 50_000,
    private readonly ttlMs = 5 * 60_000,
    private readonly negativeTtlMs = 60_000,
  ) {}

  get(hash: string, now = Date.now()): Principal | null | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.principal;
  }

  /** `expiresAt` (ms): an expiring token is never served from the cache past its expiry. */
  set(hash: string, principal: Principal | null, now = Date.now(), expiresAt = Infinity): void {
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const ttl = principal ? this.ttlMs : this.negativeTtlMs;
    this.entries.set(hash, { principal, expiresAt: Math.min(now + ttl, expiresAt) });
  }

  evict(hash: string): void {
    this.entries.delete(hash);
  }

  get size(): number {
    return this.entries.size;
  }
}
