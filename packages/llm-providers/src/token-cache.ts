import { BoundedCache } from '@pack/cache';

/** Token endpoints and credentials whose tokens one cache keeps at most. */
const MAX_TOKENS = 1_000;

/**
 * Access tokens per token_url and credentials, reused until shortly before expiry (each entry
 * lives until its own `useUntil`; at most 1,000 kept, the least recently used dropped first).
 * Concurrent calls share one token request. A 401 with a token drops it (`invalidate`). One
 * instance per service, made by its wiring and handed to every adapter it creates.
 */
export class TokenCache {
  private readonly tokens: BoundedCache<string, string>;
  private readonly pending = new Map<string, Promise<string>>();

  constructor(private readonly now: () => number = Date.now) {
    this.tokens = new BoundedCache({ maxEntries: MAX_TOKENS, ttlMs: Infinity, now });
  }

  async get(key: string, fetchToken: () => Promise<{ token: string; lifetimeS: number }>): Promise<string> {
    const cached = this.tokens.get(key);
    if (cached !== undefined) return cached;
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const fetching = fetchToken()
      .then(({ token, lifetimeS }) => {
        // Renew a little early: a tenth of the lifetime, at most a minute.
        const marginS = Math.min(60, lifetimeS / 10);
        this.tokens.set(key, token, { expiresAt: this.now() + (lifetimeS - marginS) * 1000 });
        return token;
      })
      .finally(() => this.pending.delete(key));
    this.pending.set(key, fetching);
    return fetching;
  }

  invalidate(key: string, token: string): void {
    if (this.tokens.get(key) === token) this.tokens.delete(key);
  }
}
