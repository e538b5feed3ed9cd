import type { Connection } from 'mongoose';
import { isDuplicateKey, LARGE_BATCH } from '@pack/db';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import type { RecoveryRecord } from '../domain/model';
import type { RecoveryStore } from '../domain/recovery/store';

export const RECOVERIES = 'webhook_recoveries';

/**
 * Recoveries. At most one RUNNING per webhook by a unique `running_key` that is
 * `webhook:<id>` while it runs and the recovery's own id after (FerretDB v1 has no partial
 * index). A recovery is worked by the replica holding its lease; every write is pinned to its
 * `_id` and conditional on the lease token, so a replica that lost it changes nothing.
 */
export class RecoveryRepository implements RecoveryStore {
  private readonly recoveries;

  constructor(connection: Connection) {
    this.recoveries = connection.collection<RecoveryRecord>(RECOVERIES);
  }

  async ensureIndexes(): Promise<void> {
    await this.recoveries.createIndex({ running_key: 1 }, { name: 'running_key', unique: true });
    await this.recoveries.createIndex({ state: 1, lease_until: 1 }, { name: 'lease' });
  }

  async start(record: RecoveryRecord): Promise<{ created: boolean; recovery: RecoveryRecord }> {
    return retryOnConflict<{ created: boolean; recovery: RecoveryRecord }>(
      async () => {
        try {
          await this.recoveries.insertOne(record);
          return { created: true, recovery: record };
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
        const running = await this.recoveries.findOne({ running_key: record.running_key });
        // Ended between the insert and the read: try again.
        return running ? { created: false, recovery: running } : LOST_RACE;
      },
      {
        tries: 5,
        keptChanging: () =>
          new Error(`webhook ${record.webhook_id}: recoveries kept starting and ending; try again`),
      },
    );
  }

  find(id: string): Promise<RecoveryRecord | null> {
    return this.recoveries.findOne({ _id: id });
  }

  async claim(now: Date, leaseUntil: Date, token: string, holder: string): Promise<RecoveryRecord | null> {
    // A read finds candidates (reads take no collection lock on FerretDB), an update pinned to
    // the candidate's _id takes it if it is still free (docs/decisions/0031, claims).
    const free = { state: 'RUNNING' as const, $or: [{ lease_until: null }, { lease_until: { $lt: now } }] };
    const candidates = await this.recoveries
      .find(free, { sort: { created_at: 1 }, limit: 5, projection: { _id: 1 } })
      .toArray();
    for (const candidate of candidates) {
      const claimed = await this.recoveries.findOneAndUpdate(
        { _id: candidate._id, ...free },
        { $set: { lease_until: leaseUntil, lease_token: token, holder, updated_at: now } },
        { returnDocument: 'after' },
      );
      if (claimed) return claimed;
    }
    return null;
  }

  advance(
    id: string,
    token: string,
    from: number,
    to: number,
    resent: number,
    leaseUntil: Date,
  ): Promise<RecoveryRecord | null> {
    // The cursor and the count move together, once per batch: a batch run again after a crash
    // starts from the same cursor and count, so `resent` stays exact.
    return this.recoveries.findOneAndUpdate(
      { _id: id, lease_token: token, state: 'RUNNING', cursor: from },
      {
        $set: { cursor: to, lease_until: leaseUntil, updated_at: new Date() },
        $inc: { resent },
      },
      { returnDocument: 'after' },
    );
  }

  async end(id: string, token: string, state: 'DONE' | 'CANCELLED', reason: string | null): Promise<boolean> {
    const now = new Date();
    const result = await this.recoveries.updateOne(
      { _id: id, lease_token: token, state: 'RUNNING' },
      {
        $set: {
          state,
          reason,
          running_key: id,
          lease_until: null,
          lease_token: null,
          holder: null,
          finished_at: now,
          updated_at: now,
        },
      },
    );
    return result.matchedCount === 1;
  }

  async release(id: string, token: string): Promise<void> {
    await this.recoveries.updateOne(
      { _id: id, lease_token: token },
      { $set: { lease_until: null, lease_token: null, holder: null } },
    );
  }

  async progress(): Promise<{ running: number; remaining: number }> {
    const running = await this.recoveries
      .find({ state: 'RUNNING' }, { projection: { total: 1, resent: 1 }, batchSize: LARGE_BATCH })
      .toArray();
    const remaining = running.reduce(
      (sum, recovery) => sum + Math.max(0, recovery.total - recovery.resent),
      0,
    );
    return { running: running.length, remaining };
  }
}
