import type { mongo } from 'mongoose';
import { markOf, spendKey, type CallDocument } from './budget-documents';

/**
 * How long added calls wait to be settled together (`settle`): 2 commands per batch, so at a few
 * results a second a longer wait saves commands per result; the marks meanwhile only refuse repeats.
 */
const SETTLE_MS = 1_000;

/** The settling of counted calls (docs/decisions/0046), a second's calls together. */
export class LedgerSettling {
  /** Calls to settle by month document: request id -> the repeat's token whose `$inc` counted, if one did. */
  private unsettled = new Map<string, Map<string, string | undefined>>();
  private flushing: NodeJS.Timeout | undefined;
  /** The settling under way: one at a time. */
  private settling: Promise<void> = Promise.resolve();

  constructor(private readonly spends: mongo.Collection<{ _id: string }>) {}

  /**
   * After the `$inc`: the ledger entry is marked applied, then the month's mark removed, for every
   * call of the last second together (one command, not two per call). Until then the mark keeps a repeat from adding again; a crash before leaves
   * marks behind, which only ever refuse a repeat of their own call.
   */
  add(entry: CallDocument, addedBy: string | undefined): void {
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
      // One ordered command (the entries and the months' documents share a collection): the
      // entries marked applied, then the months' marks removed. Each entry pinned to its `_id`:
      // an `_id: {$in}` filter is a scan of the whole collection on FerretDB v1 (item-runs.ts),
      // which holds 7 days of calls. When a repeat's `$inc` came first (rare), the entry names
      // it, so that repeat keeps its count.
      const calls = [...batch.values()].flatMap((marks) => [...marks]);
      await this.spends.bulkWrite(
        [
          ...calls.map(([id, by]) => ({
            updateOne: {
              filter: { _id: id },
              update: { $set: by === undefined ? { applied: true } : { applied: true, added_by: by } },
            },
          })),
          ...[...batch].map(([key, marks]) => ({
            updateOne: {
              filter: { _id: key },
              update: { $unset: Object.fromEntries([...marks.keys()].map((id) => [markOf(id), ''])) },
            },
          })),
        ] as never,
        { ordered: true },
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
}
