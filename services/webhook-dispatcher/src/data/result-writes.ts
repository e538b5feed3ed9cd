import type { mongo } from 'mongoose';
import { oneBatch, whileUnavailable } from '@pack/db';
import type { ResponseRecord } from '../domain/model';

/** One delivery's result: the update of its response, applied only while its lease is held. */
export interface ResultWrite {
  id: string;
  token: string;
  update: mongo.UpdateFilter<ResponseRecord>;
  /** The `updated_at` the update sets: with the released lease, it tells that the write took effect. */
  now: Date;
}

interface Pending extends ResultWrite {
  resolve: (kept: boolean) => void;
  reject: (error: unknown) => void;
}

/** Statements in one command at most (FerretDB runs them one after the other). */
const MAX_BATCH = 100;

/**
 * Deliveries' result writes, grouped: at most `limit` commands in flight, and whatever comes in
 * meanwhile goes in the next one, as one `update` command of many statements (a group commit).
 * A write that finds nothing waits for nothing more; under load one command carries the results
 * of many deliveries, and each command costs the driver, FerretDB and the event loop far more
 * than one more statement in it. Each write still resolves only once the database applied it.
 *
 * A command's answer counts matched statements only, so when it is short (a lease was lost
 * meanwhile) or fails, each write of the batch is settled on its own: whether it took effect
 * (released lease, its `updated_at`), else written alone, while the database is away too
 * (the request was sent: its result is written once the database is back, not left to the
 * lease's expiry, which would send it again).
 *
 * On FerretDB the writes wait for the collection while a statement that pins no `_id` runs (the
 * retention trim's deleteMany, a webhook's removal); `limit` keeps them from holding every pooled
 * connection meanwhile, so a new fire's schedule update and insert do not wait for the pool.
 */
export class ResultWrites {
  private readonly queue: Pending[] = [];
  private running = 0;

  constructor(
    private readonly responses: mongo.Collection<ResponseRecord>,
    private readonly limit: number,
  ) {}

  /** True when applied; false when the lease was no longer held. */
  write(result: ResultWrite): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...result, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.limit && this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.running += 1;
      void this.flush(batch).finally(() => {
        this.running -= 1;
        this.pump();
      });
    }
  }

  private async flush(batch: Pending[]): Promise<void> {
    try {
      const written = await this.responses.bulkWrite(
        batch.map((write) => ({
          updateOne: { filter: { _id: write.id, lease_token: write.token }, update: write.update },
        })),
        { ordered: false },
      );
      if (written.matchedCount === batch.length) {
        for (const write of batch) write.resolve(true);
        return;
      }
    } catch {
      // settled below: each write's own error, if it has one, is its caller's
    }
    let applied = new Set<string>();
    try {
      applied = await this.appliedAmong(batch);
    } catch {
      // the database is away: each write finds out on its own
    }
    for (const write of batch)
      if (applied.has(write.id)) write.resolve(true);
      else await this.settleAlone(write).then(write.resolve, write.reject);
  }

  /** The writes of the batch that took effect: their fire's lease released at their `updated_at`. */
  private async appliedAmong(batch: ResultWrite[]): Promise<Set<string>> {
    const now = new Map(batch.map((write) => [write.id, write.now.getTime()]));
    const released = await this.responses
      .find(
        { _id: { $in: [...now.keys()] }, lease_token: null },
        { projection: { _id: 1, updated_at: 1 }, ...oneBatch(batch.length) },
      )
      .toArray();
    return new Set(
      released.filter((record) => record.updated_at.getTime() === now.get(record._id)).map((r) => r._id),
    );
  }

  private settleAlone(write: ResultWrite): Promise<boolean> {
    const applied = async () =>
      (await this.responses.countDocuments(
        { _id: write.id, lease_token: null, updated_at: write.now },
        { limit: 1 },
      )) === 1;
    const alone = async () =>
      (await this.responses.updateOne({ _id: write.id, lease_token: write.token }, write.update))
        .matchedCount === 1;
    return whileUnavailable(async () => (await applied()) || (await alone()), true);
  }
}
