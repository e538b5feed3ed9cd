import type { ItemPointers, ServiceItemRecord } from '../model';
import type { CatalogStore, ItemTransition, ItemTransitions } from '../store';

/**
 * Latest and latest approved declaration of each Service Item, from its transition records:
 * the latest submission is the newest version-1 record; the latest approval the record with
 * the highest approval number (the most recent approval wins, even for an older declaration;
 * decision 0005). Equal numbers, possible only on a FerretDB that loses counter updates, go to
 * the later change instance.
 */
export function pointersOf(itemIds: readonly number[], rows: ItemTransitions): Map<number, ItemPointers> {
  const latest = latestRows(rows);
  return new Map(itemIds.map((id) => [id, pointersOfRows(latest.get(id) ?? {})]));
}

/** The records that decide an item's pointers: its newest submission and its latest approval. */
export interface LatestRows {
  submission?: ItemTransition;
  approval?: ItemTransition;
}

/** Decision 0005's order: a later submission has a larger declaration id. */
export const laterSubmission = (row: ItemTransition, than: ItemTransition | undefined): boolean =>
  !than || than.declaration_id < row.declaration_id;

/** Decision 0005's order: the higher approval number; equal numbers, the later change instance. */
export const laterApproval = (row: ItemTransition, than: ItemTransition | undefined): boolean =>
  !than ||
  row.approval_seq > than.approval_seq ||
  (row.approval_seq === than.approval_seq && row.change_instance_id > than.change_instance_id);

export function latestRows(rows: ItemTransitions): Map<number, LatestRows> {
  const result = new Map<number, LatestRows>();
  const of = (id: number) => result.get(id) ?? result.set(id, {}).get(id)!;
  for (const row of rows.submissions) {
    const latest = of(row.service_item_id);
    if (laterSubmission(row, latest.submission)) latest.submission = row;
  }
  for (const row of rows.approvals) {
    const latest = of(row.service_item_id);
    if (laterApproval(row, latest.approval)) latest.approval = row;
  }
  return result;
}

function pointersOfRows({ submission, approval }: LatestRows): ItemPointers {
  return {
    latest_declaration_id: submission?.declaration_id ?? null,
    latest_submitted_at: submission?.created_at ?? null,
    latest_approved_declaration_id: approval?.declaration_id ?? null,
    latest_approved_change_instance_id: approval?.change_instance_id ?? null,
    latest_approved_at: approval?.approved_at ?? null,
  };
}

/**
 * From the item's history (the records of all its declarations): what the list computed on
 * every read before the pointers were kept on the item. Now only the start-up backfill and
 * the repair of a restored item use it (decision 0005, amendment).
 */
export async function itemPointers(
  store: CatalogStore,
  itemIds: readonly number[],
): Promise<Map<number, ItemPointers>> {
  return pointersOf(itemIds, await store.itemTransitions(itemIds));
}

/** The pointers kept on the item document (absent fields: nothing submitted or approved yet). */
export function storedPointers(item: ServiceItemRecord): ItemPointers {
  return {
    latest_declaration_id: item.latest_declaration_id ?? null,
    latest_submitted_at: item.latest_submitted_at ?? null,
    latest_approved_declaration_id: item.latest_approved_declaration_id ?? null,
    latest_approved_change_instance_id: item.latest_approved_change_instance_id ?? null,
    latest_approved_at: item.latest_approved_at ?? null,
  };
}
