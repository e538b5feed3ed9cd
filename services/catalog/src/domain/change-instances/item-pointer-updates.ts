import type { Logger } from '@pack/logging';
import { latestRows } from './item-pointers';
import type { TransitionRecord } from '../model';
import type { CatalogStore, ItemTransition, PointerHeads } from '../store';

/** What a transition record must carry for its pointers (the outbox relay reads these fields). */
export type PointerSource = ItemTransition & Pick<TransitionRecord, '_id' | 'version'>;
export const POINTER_SOURCE_FIELDS = [
  'service_item_id',
  'version',
  'declaration_id',
  'change_instance_id',
  'approval_seq',
  'approved_at',
  'created_at',
] as const;

/** Items whose pointers one backfill pass computes before marking them. */
export const BACKFILL_SLICE = 100;
/** Records whose pointers this process applied and its relay has not met yet (beyond: evicted). */
const REMEMBERED = 10_000;

/** What a record moves forward on its item: a submission (version 1), an approval, both or none. */
export function headsOf(record: PointerSource): PointerHeads | null {
  const heads: PointerHeads = {};
  if (record.version === 1)
    heads.submission = { declaration_id: record.declaration_id, submitted_at: record.created_at };
  if (record.approval_seq > 0) heads.approval = approvalHead(record);
  return heads.submission || heads.approval ? heads : null;
}

const approvalHead = (record: ItemTransition) => ({
  approval_seq: record.approval_seq,
  change_instance_id: record.change_instance_id,
  declaration_id: record.declaration_id,
  approved_at: record.approved_at,
});

/**
 * Keeps each Service Item's latest and latest approved declaration on the item (decision 0005,
 * amendment), so that reading a page of items costs O(page), not O(the items' history).
 *
 * Every write is a conditional update that only moves a pointer forward in 0005's order, so
 * it is idempotent and order-independent (two replicas, a repair after the writer, a backfill
 * racing new submissions all end at the same pointers). The writer applies it right after the
 * record's insert (read-your-writes); the outbox relay applies it again before it publishes
 * the record's events, so a writer that died between the insert (the commit point) and the
 * update leaves no stale pointer: the relay keeps retrying until the events are out.
 */
export class ItemPointerUpdates {
  /** Insertion-ordered; the oldest entries go first once there are REMEMBERED. */
  private readonly appliedHere = new Set<string>();

  constructor(
    private readonly store: CatalogStore,
    private readonly logger: Logger,
  ) {}

  /**
   * After the record's insert, before its events are announced to the relay. A failure is left
   * to the relay (the change is committed; its events are pending until the pointers are set).
   */
  async afterCommit(record: PointerSource): Promise<void> {
    const heads = headsOf(record);
    if (!heads) return;
    try {
      await this.store.advanceItemPointers(record.service_item_id, heads);
      this.remember(record._id);
    } catch (error) {
      this.logger.warn(
        { err: error, service_item_id: record.service_item_id, transition: record._id },
        'Service Item pointers deferred to the outbox relay',
      );
    }
  }

  /**
   * The outbox relay's step before publishing a record's events. Skips a record this process
   * applied already (one update per change, not two); after a crash nothing is remembered.
   */
  async beforePublishing(record: PointerSource): Promise<void> {
    if (this.appliedHere.delete(record._id)) return;
    const heads = headsOf(record);
    if (heads) await this.store.advanceItemPointers(record.service_item_id, heads);
  }

  /** Computes an item's pointers from its whole history (a backfill, a restored item). */
  async recompute(itemId: number): Promise<void> {
    const latest = latestRows(await this.store.itemTransitions([itemId])).get(itemId);
    const heads: PointerHeads = {};
    if (latest?.submission)
      heads.submission = {
        declaration_id: latest.submission.declaration_id,
        submitted_at: latest.submission.created_at,
      };
    if (latest?.approval) heads.approval = approvalHead(latest.approval);
    if (heads.submission || heads.approval) await this.store.advanceItemPointers(itemId, heads);
  }

  /**
   * Items stored before their pointers were kept get them once, BACKFILL_SLICE at a time: each
   * item's history is read alone (an equality on the item, which our FerretDB answers in
   * PostgreSQL), its pointers advanced, then the slice is marked. Idempotent: two replicas
   * backfilling at once, or with new submissions, end at the same pointers.
   */
  async backfill(): Promise<number> {
    let done = 0;
    for (;;) {
      const ids = await this.store.itemsWithoutPointers(BACKFILL_SLICE);
      if (ids.length === 0) break;
      for (const id of ids) await this.recompute(id);
      await this.store.markItemPointers(ids);
      done += ids.length;
    }
    if (done > 0) this.logger.info({ items: done }, 'Service Item pointers backfilled');
    return done;
  }

  private remember(id: string): void {
    this.appliedHere.add(id);
    if (this.appliedHere.size > REMEMBERED) {
      const oldest = this.appliedHere.values().next().value;
      if (oldest !== undefined) this.appliedHere.delete(oldest);
    }
  }
}
