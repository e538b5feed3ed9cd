import { randomUUID } from 'node:crypto';
import type { Connection } from 'mongoose';
import { deleteInSlices, insertAll, isDuplicateKey } from '@pack/db';
import { GroupCommit, LOST_RACE, retryOnConflict } from '@pack/reliability';
import type { CountedCall } from '../domain/budgets/store';
import {
  BUDGET_CALLS_COLLECTION,
  BUDGET_SPEND_COLLECTION,
  long,
  markOf,
  spendKey,
  type Added,
  type CallDocument,
  type SpendDocument,
} from './budget-documents';

/**
 * How long added calls wait to be settled together (`settle`): 2 commands per batch, so at a few
 * results a second a longer wait saves commands per result; the marks meanwhile only refuse repeats.
 */
const SETTLE_MS = 1_000;

/**
 * The spend in `ai_budget_spend` (one document per Service and UTC month, `$inc` on an Int64:
 * exact), counted once per request id through the ledger `ai_budget_calls` (docs/decisions/0046):
 * the call's ledger entry is inserted, the month's `$inc` is conditional on the call's mark being
 * absent and sets it in the same single-document write, then, for the calls of a second together,
 * the entries are marked applied and the marks removed. The calls of one group commit share the
 * insert and the `$inc` (0052). A crash anywhere leaves a state a redelivery completes without
 * counting twice; one before the settling leaves marks behind (harmless: they refuse only a
 * repeat of their call).
 */
export class BudgetLedger {
  private readonly spends;
  private readonly calls;
  /** Calls to settle by month document: request id -> the repeat's token whose `$inc` counted, if one did. */
  private unsettled = new Map<string, Map<string, string | undefined>>();
  private flushing: NodeJS.Timeout | undefined;
  /** The settling under way: one at a time. */
  private settling: Promise<void> = Promise.resolve();
  /** First counts of calls, group-committed: those of `lingerMs` share their writes (0052). */
  private readonly counts;

  constructor(connection: Connection, lingerMs = 0) {
    this.counts = new GroupCommit<CountedCall, boolean>((calls) => this.countAll(calls), { lingerMs });
    this.spends = connection.collection<SpendDocument>(BUDGET_SPEND_COLLECTION);
    this.calls = connection.collection<CallDocument>(BUDGET_CALLS_COLLECTION);
  }

  /** The ledger's `at` index: the retention sweep deletes in slices by it. */
  async ensureIndexes(): Promise<void> {
    await this.calls.createIndex({ at: 1 }, { name: 'at' });
  }

  /**
   * Removes ledger entries written before `cutoff`, in slices by `at` (deleteInSlices: any
   * number, on FerretDB too); idempotent, so every replica may run it. An entry only keeps a
   * repeat of its call from counting again, which matters as long as a copy of the result may
   * come (the processed-events retention); a mark an unapplied entry left in its month document
   * still refuses that call's repeat, and an entry without one was never added.
   */
  sweepLedger(cutoff: Date, size?: number): Promise<number> {
    return deleteInSlices(this.calls, { match: {}, key: 'at', upTo: { $lt: cutoff }, size });
  }

  count(call: CountedCall): Promise<boolean> {
    return this.counts.run(call);
  }

  /**
   * The first count of calls (a group of them, 0052): their ledger entries in one unordered
   * insert, then per month one `$inc` of their sum that sets every call's mark, matched only
   * while none of the marks is there (a repeat's mark, rare). What that cannot settle (a month
   * without its document yet, a mark there) goes the one-call way; a repeat (its entry was there)
   * goes on as `repeat`.
   */
  private async countAll(calls: CountedCall[]): Promise<boolean[]> {
    const entries: CallDocument[] = calls.map((call) => ({
      _id: call.request_id,
      service_id: call.service_id,
      month: call.month,
      units: long(call.units),
      unpriced: call.unpriced,
      applied: false,
      at: new Date(),
    }));
    const inserted = await insertAll(this.calls, entries);
    const fresh = entries.filter((_, index) => inserted[index]);
    const counted = new Map<string, boolean>();
    for (const month of groupBy(fresh, (entry) => spendKey(entry.service_id, entry.month)).values())
      for (const [id, result] of await this.addMonth(month)) counted.set(id, result);
    return Promise.all(
      entries.map(async (entry, index) =>
        inserted[index] ? counted.get(entry._id)! : this.countRepeat(entry._id),
      ),
    );
  }

  /** Fresh entries of one month: one `$inc` for all when no mark is there, else one by one. */
  private async addMonth(entries: CallDocument[]): Promise<Map<string, boolean>> {
    const counted = new Map<string, boolean>();
    if (entries.length > 1) {
      const token = randomUUID();
      const marks = entries.map((entry) => markOf(entry._id));
      const updated = await this.spends.updateOne(
        { _id: spendKey(entries[0]!.service_id, entries[0]!.month), ...absent(marks) },
        {
          $inc: {
            units: long(entries.reduce((sum, entry) => sum + BigInt(entry.units.toString()), 0n)),
            unpriced_calls: entries.filter((entry) => entry.unpriced).length,
          },
          $set: Object.fromEntries(marks.map((mark) => [mark, token])),
        },
      );
      if (updated.modifiedCount === 1) {
        for (const entry of entries) {
          this.settle(entry, undefined);
          counted.set(entry._id, true);
        }
        return counted;
      }
    }
    for (const entry of entries) {
      const added = await this.add(entry, randomUUID());
      if (added !== 'applied') this.settle(entry, added === 'added' ? undefined : added.by);
      counted.set(entry._id, added === 'added');
    }
    return counted;
  }

  /** A repeat (a redelivery, another replica): only an entry not marked applied may need the `$inc`. */
  private async countRepeat(requestId: string): Promise<boolean> {
    const found = await this.calls.findOne({ _id: requestId }, { promoteLongs: false });
    if (!found || found.applied) return false;
    return this.repeat(found); // counted in the month first written, with the amount first written
  }

  /**
   * A repeat of a call whose entry was not applied when read. Its first counter may have settled
   * it since the read (marked it applied, then removed the mark): an `$inc` that found no mark is
   * then a second one, which the entry, applied now, tells; it is taken back, unless the entry
   * names this `$inc` (it came before the first counter's, which found its mark and settled it).
   * A repeat never settles: only the first counter does, after its own `$inc` was tried, so no
   * mark is removed before that `$inc` could see it.
   */
  private async repeat(entry: CallDocument): Promise<boolean> {
    const token = randomUUID();
    if ((await this.add(entry, token)) !== 'added') return false;
    const settled = await this.settled(entry._id);
    if (settled?.applied !== true || settled.added_by === token) return true;
    await this.spends.updateOne(
      { _id: spendKey(entry.service_id, entry.month) },
      {
        $inc: { units: long(-BigInt(entry.units.toString())), unpriced_calls: entry.unpriced ? -1 : 0 },
        $unset: { [markOf(entry._id)]: '' },
      },
    );
    return false;
  }

  private async applied(requestId: string): Promise<boolean> {
    return (await this.settled(requestId))?.applied === true;
  }

  private settled(requestId: string) {
    return this.calls.findOne({ _id: requestId }, { projection: { applied: 1, added_by: 1 } });
  }

  /**
   * After the `$inc`: the ledger entry is marked applied, then the month's mark removed, for every
   * call of the last second together (one `update` of the ledger and one per month document, not
   * two per call). Until then the mark keeps a repeat from adding again; a crash before leaves
   * marks behind, which only ever refuse a repeat of their own call.
   */
  private settle(entry: CallDocument, addedBy: string | undefined): void {
    const key = spendKey(entry.service_id, entry.month);
    const marks = this.unsettled.get(key) ?? new Map<string, string | undefined>();
    marks.set(entry._id, addedBy);
    this.unsettled.set(key, marks);
    this.schedule();
  }

  /** Settles what `settle` collected (also at stop), after any settling under way. */
  flush(): Promise<void> {
    const next = this.settling.then(() => this.settleBatch());
    this.settling = next.catch(() => undefined);
    return next;
  }

  private async settleBatch(): Promise<void> {
    const batch = this.unsettled;
    this.unsettled = new Map();
    if (this.flushing) clearTimeout(this.flushing);
    this.flushing = undefined;
    if (batch.size === 0) return;
    try {
      // One command, each entry pinned to its `_id`: an `_id: {$in}` filter is a scan of the
      // whole ledger on FerretDB v1 (item-runs.ts), which holds 7 days of calls. When a repeat's
      // `$inc` came first (rare), the entry names it, so that repeat keeps its count.
      const calls = [...batch.values()].flatMap((marks) => [...marks]);
      await this.calls.bulkWrite(
        calls.map(([id, by]) => ({
          updateOne: {
            filter: { _id: id },
            update: { $set: by === undefined ? { applied: true } : { applied: true, added_by: by } },
          },
        })),
        { ordered: false },
      );
      for (const [key, marks] of batch)
        await this.spends.updateOne(
          { _id: key },
          { $unset: Object.fromEntries([...marks.keys()].map((id) => [markOf(id), ''])) },
        );
    } catch (error) {
      // Kept for the next flush: marks stay meanwhile (a repeat is still refused by them).
      for (const [key, marks] of batch) {
        const kept = this.unsettled.get(key) ?? new Map<string, string | undefined>();
        for (const [id, by] of marks) kept.set(id, by);
        this.unsettled.set(key, kept);
      }
      this.schedule();
      throw error;
    }
  }

  private schedule(): void {
    this.flushing ??= setTimeout(() => void this.flush().catch(() => undefined), SETTLE_MS);
    this.flushing.unref?.();
  }

  /**
   * The `$inc` of the call's month with its mark set to `token`, unless a mark is there: then the
   * token of the count whose `$inc` holds it; 'applied' when the call is settled already.
   */
  private async add(entry: CallDocument, token: string): Promise<Added> {
    const key = spendKey(entry.service_id, entry.month);
    const mark = markOf(entry._id);
    const field = mark.slice('adding.'.length);
    const unpriced = entry.unpriced ? 1 : 0;
    // Each round ends, or sees the month document created by another call (the next round's
    // update then matches): at most two rounds unless the mark came and went, which only happens
    // once the entry is applied, when there is nothing to add.
    return retryOnConflict<Added>(
      async () => {
        const updated = await this.spends.updateOne(
          { _id: key, [mark]: { $exists: false } },
          { $inc: { units: entry.units, unpriced_calls: unpriced }, $set: { [mark]: token } },
        );
        if (updated.modifiedCount === 1) return 'added';
        // Not matched: the month has no document yet, or the mark is there (done).
        try {
          await this.spends.insertOne({
            _id: key,
            service_id: entry.service_id,
            month: entry.month,
            units: entry.units,
            unpriced_calls: unpriced,
            adding: { [field]: token },
          });
          return 'added';
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          // It exists: either with the mark (done), or another call created it a moment ago.
          const marked = await this.spends.findOne(
            { _id: key, [mark]: { $exists: true } },
            { projection: { [mark]: 1 } },
          );
          if (marked) {
            const by = marked.adding?.[field];
            return { by: typeof by === 'string' ? by : undefined };
          }
          // No mark: removed by the settling or by a repeat taking its second add back, both only
          // once the entry is applied; or the document is new and the next round adds.
          if (await this.applied(entry._id)) return 'applied';
        }
        return LOST_RACE;
      },
      {
        tries: 3,
        keptChanging: () => new Error(`could not add call ${entry._id} to the spend of ${key}`),
      },
    );
  }
}

/** A filter requiring none of `marks` (field paths) to be there. */
function absent(marks: string[]): Record<string, { $exists: false }> {
  return Object.fromEntries(marks.map((mark) => [mark, { $exists: false as const }]));
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}
