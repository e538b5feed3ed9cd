import { randomUUID } from 'node:crypto';
import type { Connection, mongo } from 'mongoose';
import { deleteInSlices } from '@pack/db';
import { GroupCommit } from '@pack/reliability';
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
import { addAlone, countCommand } from './budget-count-command';
import { LedgerSettling } from './budget-settling';

/**
 * The spend in `ai_budget_spend` (one document per Service and UTC month, `$inc` on an Int64:
 * exact), counted once per request id through the ledger entries beside it (docs/decisions/0046):
 * in one ordered command the call's ledger entry is inserted and the month's `$inc`, conditional
 * on the call's mark being absent, sets it in the same single-document write
 * (budget-count-command.ts); then, for the calls of a second together, the entries are marked
 * applied and the marks removed. The calls of one group commit share the command (0052). A crash
 * anywhere leaves a state a redelivery completes without counting twice; one before the settling
 * leaves marks behind (harmless: they refuse only a repeat of their call). Entries in
 * `ai_budget_calls` (the earlier layout's ledger, apart) still refuse their repeats, read
 * while it holds any.
 */
export class BudgetLedger {
  private readonly spends;
  /** The ledger entries: in the months' collection. */
  private readonly calls;
  /** The earlier layout's ledger entries (`ai_budget_calls`), until swept. */
  private readonly older;
  /** Whether `older` holds entries: read once, and again after each sweep. */
  private olderState: 'unknown' | 'empty' | 'holding' = 'unknown';
  private readonly settling;
  /** First counts of calls, group-committed: those of `lingerMs` share their writes (0052). */
  private readonly counts;

  constructor(connection: Connection, lingerMs = 0) {
    this.counts = new GroupCommit<CountedCall, boolean>((calls) => this.countAll(calls), { lingerMs });
    this.spends = connection.collection<SpendDocument>(BUDGET_SPEND_COLLECTION);
    this.calls = connection.collection<CallDocument>(BUDGET_SPEND_COLLECTION);
    this.older = connection.collection<CallDocument>(BUDGET_CALLS_COLLECTION);
    this.settling = new LedgerSettling(this.spends as unknown as mongo.Collection<{ _id: string }>);
  }

  /** The ledger's `at` index: the retention sweep deletes in slices by it. */
  async ensureIndexes(): Promise<void> {
    await this.calls.createIndex({ at: 1 }, { name: 'at' });
    await this.older.createIndex({ at: 1 }, { name: 'at' });
  }

  /**
   * Removes ledger entries written before `cutoff`, in slices by `at` (deleteInSlices: any
   * number, on FerretDB too); idempotent, so every replica may run it. An entry only keeps a
   * repeat of its call from counting again, which matters as long as a copy of the result may
   * come (the processed-events retention); a mark an unapplied entry left in its month document
   * still refuses that call's repeat, and an entry without one was never added.
   */
  async sweepLedger(cutoff: Date, size?: number): Promise<number> {
    const upTo = { $lt: cutoff };
    // Months' documents have no `at`.
    const swept = await deleteInSlices(this.calls, {
      match: { at: { $exists: true } },
      key: 'at',
      upTo,
      size,
    });
    const older = await deleteInSlices(this.older, { match: {}, key: 'at', upTo, size });
    this.olderState = 'unknown';
    return swept + older;
  }

  count(call: CountedCall): Promise<boolean> {
    return this.counts.run(call);
  }

  /**
   * The first count of calls (a group of them, 0052): per month one command inserts their ledger
   * entries and adds their sum (budget-count-command.ts). A call whose entry is there already is a
   * repeat (`repeat`), as is a second copy of one call in the group.
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
    const counted = new Map<string, boolean>();
    const older = await this.inOlder(entries);
    const firsts = new Map(
      entries.filter((entry) => !older.has(entry._id)).map((entry) => [entry._id, entry]),
    );
    for (const month of groupBy([...firsts.values()], (entry) =>
      spendKey(entry.service_id, entry.month),
    ).values())
      for (const [id, result] of await this.countMonth(month)) counted.set(id, result);
    return Promise.all(
      entries.map(async (entry) => {
        if (older.has(entry._id)) return this.countRepeat(entry._id, this.older);
        // A second copy of a call in the group is its repeat.
        if (firsts.get(entry._id) !== entry) return this.countRepeat(entry._id, this.calls);
        return counted.get(entry._id)!;
      }),
    );
  }

  /**
   * Fresh entries of one month: one command for all. Stopped (an entry there already, a mark in
   * the month, its document created meanwhile), nothing was added: the entries read tell which
   * went in (this command's token: added one by one), which were there (repeats) and which were
   * not reached (counted again).
   */
  private async countMonth(entries: CallDocument[]): Promise<Map<string, boolean>> {
    const counted = new Map<string, boolean>();
    const token = randomUUID();
    if (
      (await countCommand(this.calls as unknown as mongo.Collection<{ _id: string }>, entries, token)) ===
      'added'
    ) {
      for (const entry of entries) {
        this.settle(entry, undefined);
        counted.set(entry._id, true);
      }
      return counted;
    }
    const found = await Promise.all(
      entries.map((entry) => this.calls.findOne({ _id: entry._id }, { promoteLongs: false })),
    );
    const unreached: CallDocument[] = [];
    for (const [index, entry] of entries.entries()) {
      const there = found[index];
      if (!there) unreached.push(entry);
      else if (there.counter === token) counted.set(entry._id, await this.addAlone(entry));
      else counted.set(entry._id, !there.applied && (await this.repeat(there, this.calls)));
    }
    if (unreached.length > 0)
      for (const [id, result] of await this.countMonth(unreached)) counted.set(id, result);
    return counted;
  }

  /** A first count whose entry is in, added alone: the `$inc` unless a mark is there. */
  private async addAlone(entry: CallDocument): Promise<boolean> {
    const added = await this.add(entry, randomUUID(), this.calls);
    if (added !== 'applied') this.settle(entry, added === 'added' ? undefined : added.by);
    return added === 'added';
  }

  /** The calls whose entries are in `older`: read only while it holds any. */
  private async inOlder(entries: CallDocument[]): Promise<Set<string>> {
    if (this.olderState === 'unknown')
      this.olderState = (await this.older.findOne({}, { projection: { _id: 1 } })) ? 'holding' : 'empty';
    if (this.olderState === 'empty') return new Set();
    const found = await Promise.all(
      entries.map((entry) => this.older.findOne({ _id: entry._id }, { projection: { _id: 1 } })),
    );
    return new Set(found.flatMap((entry) => (entry ? [entry._id] : [])));
  }

  /** A repeat (a redelivery, another replica): only an entry not marked applied may need the `$inc`. */
  private async countRepeat(requestId: string, ledger: Ledger): Promise<boolean> {
    const found = await ledger.findOne({ _id: requestId }, { promoteLongs: false });
    if (!found || found.applied) return false;
    return this.repeat(found, ledger); // counted in the month first written, with the amount first written
  }

  /**
   * A repeat of a call whose entry was not applied when read. Its first counter may have settled
   * it since the read (marked it applied, then removed the mark): an `$inc` that found no mark is
   * then a second one, which the entry, applied now, tells; it is taken back, unless the entry
   * names this `$inc` (it came before the first counter's, which found its mark and settled it).
   * A repeat never settles: only the first counter does, after its own `$inc` was tried, so no
   * mark is removed before that `$inc` could see it.
   */
  private async repeat(entry: CallDocument, ledger: Ledger): Promise<boolean> {
    const token = randomUUID();
    if ((await this.add(entry, token, ledger)) !== 'added') return false;
    const settled = await this.settled(entry._id, ledger);
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

  private async applied(requestId: string, ledger: Ledger): Promise<boolean> {
    return (await this.settled(requestId, ledger))?.applied === true;
  }

  private settled(requestId: string, ledger: Ledger) {
    return ledger.findOne({ _id: requestId }, { projection: { applied: 1, added_by: 1 } });
  }

  /** After the `$inc`: settled with the calls of the same second (budget-settling.ts). */
  private settle(entry: CallDocument, addedBy: string | undefined): void {
    this.settling.add(entry, addedBy);
  }

  /** Settles the calls counted and not settled yet (also at stop). */
  flush(): Promise<void> {
    return this.settling.flush();
  }

  private add(entry: CallDocument, token: string, ledger: Ledger): Promise<Added> {
    return addAlone(this.spends, entry, token, () => this.applied(entry._id, ledger));
  }
}

/** Where a call's ledger entry is: beside the months, or in the earlier layout's collection. */
type Ledger = mongo.Collection<CallDocument>;

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}
