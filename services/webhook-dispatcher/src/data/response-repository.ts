import type { PageStart } from '@pack/contracts';
import type { Connection } from 'mongoose';
import { deleteInSlices, dropReplacedIndex, findPage, isDuplicateKey, oneBatch } from '@pack/db';
import { retryOnConflict } from '@pack/reliability';
import type { FirePlan } from '../domain/firing/firing-rules';
import type { AttemptRecord, Page, ResponseRecord, ScheduleRecord, Trigger } from '../domain/model';
import type { FailedWindow, ResponseFilter, ResponseStore, WindowCounter } from '../domain/responses/store';
import type { ScheduleStore } from '../domain/firing/store';
import { claimDue } from './response-claim';
import { ResultWrites } from './result-writes';

export const RESPONSES = 'webhook_responses';
export const SCHEDULES = 'webhook_schedules';
export const WINDOW_COUNTERS = 'rate_windows';

const FINAL = ['OK', 'FAILED'] as const;

/** State and resend filters of the response lists (`resend_of: null` also matches older records without it). */
function filterOf(filter: Omit<ResponseFilter, 'webhookIds'>): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  if (filter.state) query.state = filter.state;
  if (filter.resend !== undefined) query.resend_of = filter.resend ? { $ne: null } : null;
  return query;
}

function failedIn(window: FailedWindow): Record<string, unknown> {
  return {
    webhook_id: window.webhookId,
    state: 'FAILED',
    resend_of: null,
    created_at: { $gte: window.since, $lte: window.until },
  };
}

/**
 * Result-write commands in flight at most (each carries many results under load; result-writes.ts).
 * Two: one command is written while the next fills; at concurrency 20 four in flight carried 2-3
 * results each, and each command costs the dispatcher and FerretDB far more than a statement.
 */
const RESULT_WRITES = 2;

/**
 * Fires (Webhook Responses) and the per-webhook schedule. Every decision here is one
 * conditional single-document update (docs/decisions/0002): whoever gets a document back won.
 */
export class ResponseRepository implements ResponseStore, ScheduleStore, WindowCounter {
  private readonly responses;
  private readonly schedules;
  private readonly counters;
  private readonly resultWrites;

  constructor(connection: Connection) {
    this.responses = connection.collection<ResponseRecord>(RESPONSES);
    this.schedules = connection.collection<ScheduleRecord>(SCHEDULES);
    this.counters = connection.collection<{ _id: string; count: number; expires_at: Date }>(WINDOW_COUNTERS);
    this.resultWrites = new ResultWrites(this.responses, RESULT_WRITES);
  }

  async ensureIndexes(): Promise<void> {
    await this.responses.createIndex({ webhook_id: 1, seq: -1 }, { name: 'webhook_seq' });
    // listAcross: newest first, its filters (the owner's webhooks, a state) read from the index
    // too, so a page far into the list skips index entries only (docs/decisions/0033, amendment 2)
    await this.responses.createIndex(
      { created_at: -1, _id: -1, webhook_id: 1, state: 1 },
      { name: 'newest_scoped' },
    );
    await dropReplacedIndex(this.responses, 'newest');
    await this.responses.createIndex({ state: 1, due_at: 1 }, { name: 'due' });
    await this.responses.createIndex({ state: 1, lease_until: 1 }, { name: 'lease' });
    await this.counters.createIndex({ expires_at: 1 }, { name: 'expires' });
  }

  // --- schedule ---------------------------------------------------------------------------

  read(webhookId: number): Promise<ScheduleRecord | null> {
    return this.schedules.findOne({ _id: webhookId });
  }

  tryFire(webhookId: number, plan: FirePlan): Promise<ScheduleRecord | null> {
    const filter: Record<string, unknown> = { _id: webhookId };
    if (plan.expect.freeAt !== null) filter.block_until = { $lte: plan.expect.freeAt };
    const { rate } = plan.expect;
    if (rate.kind === 'older_than') filter.rate_slot = { $lt: rate.slot };
    else {
      filter.rate_slot = rate.slot;
      filter.rate_count = rate.kind === 'room' ? { $lte: rate.max } : { $gte: rate.limit };
    }
    const { rate_count, ...next } = plan.next;
    const set: Omit<Partial<FirePlan['next']>, 'rate_count'> = plan.rateOnly
      ? { rate_slot: next.rate_slot }
      : next;
    const update =
      typeof rate_count === 'number'
        ? { $set: { ...set, rate_count }, $inc: { seq: plan.count } }
        : { $set: set, $inc: { seq: plan.count, rate_count: rate_count.inc } };
    return this.schedules.findOneAndUpdate(filter, update, { returnDocument: 'after' });
  }

  async countSuppressed(webhookId: number): Promise<void> {
    await this.schedules.updateOne({ _id: webhookId }, { $inc: { suppressed: 1 } });
  }

  // --- responses --------------------------------------------------------------------------

  async insert(record: ResponseRecord): Promise<boolean> {
    try {
      await this.responses.insertOne(record);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  /** One command for many fires; false for each one that existed already. */
  async insertMany(records: ResponseRecord[]): Promise<boolean[]> {
    if (records.length === 1) return [await this.insert(records[0]!)];
    try {
      await this.responses.insertMany(records, { ordered: false });
      return records.map(() => true);
    } catch (error) {
      const failed = new Set<number>();
      const writeErrors = (error as { writeErrors?: { index: number; code?: number }[] }).writeErrors;
      if (!writeErrors?.length) throw error;
      for (const writeError of writeErrors) {
        if (writeError.code !== 11000) throw error;
        failed.add(writeError.index);
      }
      return records.map((_, index) => !failed.has(index));
    }
  }

  merge(id: string, trigger: Trigger): Promise<ResponseRecord | null> {
    return this.responses.findOneAndUpdate(
      { _id: id, state: 'SCHEDULED', event_at: { $lte: trigger.event_at } },
      {
        $set: {
          body: trigger.body,
          event_at: trigger.event_at,
          mode: trigger.mode,
          change_instance_id: trigger.change_instance_id,
          updated_at: new Date(),
        },
      },
      { returnDocument: 'after' },
    );
  }

  find(id: string): Promise<ResponseRecord | null> {
    return this.responses.findOne({ _id: id });
  }

  findBySeq(webhookId: number, seq: number): Promise<ResponseRecord | null> {
    return this.responses.findOne({ webhook_id: webhookId, seq });
  }

  list(
    webhookId: number,
    limit: number,
    start: PageStart,
    filter: Omit<ResponseFilter, 'webhookIds'> = {},
  ): Promise<Page<ResponseRecord>> {
    // seq is distinct per webhook (its counter): a total order, so a late page reads from the end
    return findPage(
      this.responses,
      { webhook_id: webhookId, ...filterOf(filter) },
      { sort: { seq: -1 }, limit, ...start, unique: true },
    );
  }

  listAcross(filter: ResponseFilter, limit: number, start: PageStart): Promise<Page<ResponseRecord>> {
    const query: Record<string, unknown> = filterOf(filter);
    if (filter.webhookIds) query.webhook_id = { $in: filter.webhookIds };
    return findPage(this.responses, query, { sort: { created_at: -1, _id: -1 }, limit, ...start });
  }

  countFailed(window: FailedWindow): Promise<number> {
    return this.responses.countDocuments(failedIn(window));
  }

  failedAfter(window: FailedWindow, afterSeq: number, limit: number): Promise<ResponseRecord[]> {
    return this.responses
      .find({ ...failedIn(window), seq: { $gt: afterSeq } }, { sort: { seq: 1 }, limit, ...oneBatch(limit) })
      .toArray();
  }

  /** A due fire, or one whose lease expired, under a new lease (response-claim.ts). */
  claim(now: Date, leaseUntil: Date, token: string): Promise<ResponseRecord | null> {
    return claimDue(this.responses, now, leaseUntil, token);
  }

  finish(
    id: string,
    token: string,
    set: Partial<ResponseRecord>,
    attempt: AttemptRecord | null,
  ): Promise<boolean> {
    const now = new Date();
    const update: Record<string, unknown> = {
      $set: { ...set, lease_until: null, lease_token: null, updated_at: now },
    };
    if (attempt) {
      update.$push = { attempts: attempt };
      update.$inc = { attempt_count: 1 };
    }
    return this.resultWrites.write({ id, token, update, now });
  }

  reschedule(id: string, token: string, due: Date, attempt: AttemptRecord | null): Promise<boolean> {
    return this.finish(id, token, { state: 'SCHEDULED', due_at: due }, attempt);
  }

  /**
   * The newest `keep` stay, whatever their state; older finished ones go (unfinished ones when
   * they finish), in slices by `seq` (deleteInSlices: two commands per DELETE_SLICE (50,000), any backlog).
   */
  async trim(webhookId: number, keep: number): Promise<number> {
    const boundary = await this.responses
      .find({ webhook_id: webhookId }, { sort: { seq: -1 }, skip: keep, limit: 1, projection: { seq: 1 } })
      .toArray();
    const oldestToGo = boundary[0]?.seq;
    if (oldestToGo === undefined) return 0;
    return deleteInSlices(this.responses, {
      match: { webhook_id: webhookId, state: { $in: [...FINAL] } },
      key: 'seq',
      upTo: { $lte: oldestToGo },
    });
  }

  async webhooksBeyond(keep: number): Promise<number[]> {
    const rows = await this.responses
      .aggregate<{ _id: number }>([
        { $group: { _id: '$webhook_id', count: { $sum: 1 } } },
        { $match: { count: { $gt: keep } } },
      ])
      .toArray();
    return rows.map((row) => row._id);
  }

  backlog(): Promise<number> {
    return this.responses.countDocuments({ state: 'SCHEDULED' });
  }

  // --- read-rate windows ------------------------------------------------------------------

  async hit(key: string, window: number, expiresAt: Date): Promise<number> {
    const id = `${key}:${window}`;
    // Two first hits of a window race to insert it; the loser counts on the winner's document.
    return retryOnConflict(
      async () => {
        const after = await this.counters.findOneAndUpdate(
          { _id: id },
          { $inc: { count: 1 }, $setOnInsert: { expires_at: expiresAt } },
          { upsert: true, returnDocument: 'after' },
        );
        // Expired windows are removed now and then, by any replica (idempotent).
        if (Math.random() < 0.01)
          deleteInSlices(this.counters, { match: {}, key: 'expires_at', upTo: { $lt: new Date() } }).catch(
            () => undefined,
          );
        return after?.count ?? 1;
      },
      { tries: 5, lostRace: isDuplicateKey, keptChanging: (error) => error as Error },
    );
  }
}
