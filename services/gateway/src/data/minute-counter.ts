import { ConnectionStates, type Connection } from 'mongoose';
import { RateLimiterMemory, RateLimiterMongo, RateLimiterRes } from 'rate-limiter-flexible';
import { BoundedCache } from '@pack/cache';
import { deleteInSlices } from '@pack/db';
import type { Logger } from '@pack/logging';
import type { MinuteCounter } from '../domain/store';

export const HEALTH_LIMITS = 'health_limits';
const MINUTE_S = 60;
/**
 * Limiters kept, one per limit value: a limit set long ago makes room (the counts are in the
 * documents; only the fallback's in-memory counts of that old limit go).
 */
const LIMITS_KEPT = { maxEntries: 16, ttlMs: Infinity };

/**
 * Per-minute counters in MongoDB (rate-limiter-flexible's RateLimiterMongo: one upsert `$inc`
 * per request), so all gateway replicas share one allowance per client (docs/decisions/0029).
 * A client over its allowance is then answered from this replica's memory until its window
 * ends, so a flood costs no database command; if MongoDB fails, a per-replica memory limiter
 * stands in. Limits change live: one limiter per limit value, all on the same documents.
 */
export class MongoMinuteCounter implements MinuteCounter {
  private readonly limiters = new BoundedCache<number, RateLimiterMongo>(LIMITS_KEPT);
  private readonly fallbacks = new BoundedCache<number, RateLimiterMemory>(LIMITS_KEPT);
  private sweptAt = Date.now();

  constructor(
    private readonly connection: Connection,
    private readonly logger: Logger,
  ) {}

  /** FerretDB has no TTL indexes: the key index is made here, expired windows are swept below. */
  async ensureIndexes(): Promise<void> {
    const collection = this.connection.collection(HEALTH_LIMITS);
    await collection.createIndex({ key: 1 }, { unique: true, name: 'key' });
    // the sweep's slices are ranges of expire (deleteInSlices)
    await collection.createIndex({ expire: 1 }, { name: 'expire' });
  }

  async consume(key: string, limit: number): Promise<number> {
    this.sweep();
    try {
      // Without a connection the shared counter would wait for one; /readyz must answer now.
      const connected = this.connection.readyState === ConnectionStates.connected;
      await (connected ? this.limiter(limit) : this.fallback(limit)).consume(key);
      return 0;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      return Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    }
  }

  private limiter(limit: number): RateLimiterMongo {
    let limiter = this.limiters.get(limit);
    if (!limiter) {
      limiter = new RateLimiterMongo({
        storeClient: this.connection,
        tableName: HEALTH_LIMITS,
        keyPrefix: 'health',
        points: limit,
        duration: MINUTE_S,
        disableIndexesCreation: true,
        inMemoryBlockOnConsumed: limit + 1,
        insuranceLimiter: this.fallback(limit),
      });
      this.limiters.set(limit, limiter);
    }
    return limiter;
  }

  private fallback(limit: number): RateLimiterMemory {
    let limiter = this.fallbacks.get(limit);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points: limit, duration: MINUTE_S });
      this.fallbacks.set(limit, limiter);
    }
    return limiter;
  }

  /** A client's document is reused by its next window; documents of clients gone quiet are removed. */
  private sweep(): void {
    if (Date.now() - this.sweptAt < MINUTE_S * 1000) return;
    this.sweptAt = Date.now();
    deleteInSlices(this.connection.collection(HEALTH_LIMITS), {
      match: {},
      key: 'expire',
      upTo: { $lt: new Date(Date.now() - MINUTE_S * 1000) },
    }).catch((error: unknown) => this.logger.warn({ err: error }, 'sweeping health limit windows failed'));
  }
}
