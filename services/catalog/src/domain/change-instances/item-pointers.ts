import type { ItemPointers } from '../model';
import type { CatalogStore, ItemTransitions } from '../store';

/**
 * Latest and latest approved declaration of each Service Item, from its transition records:
 * the latest submission is the newest version-1 record; the latest approval the record with
 * the highest approval number (the most recent approval wins, even for an older declaration;
 * decision 0005). Equal numbers, possible only on a FerretDB that loses counter updates, go to
 * the later change instance.
 */
export function pointersOf(itemIds: readonly number[], rows: ItemTransitions): Map<number, ItemPointers> {
  const result = new Map<number, ItemPointers>(
    itemIds.map((id) => [
      id,
      {
        latest_declaration_id: null,
        latest_submitted_at: null,
        latest_approved_declaration_id: null,
        latest_approved_change_instance_id: null,
        latest_approved_at: null,
      },
    ]),
  );
  for (const row of rows.submissions) {
    const pointers = result.get(row.service_item_id);
    if (pointers && (pointers.latest_declaration_id ?? 0) < row.declaration_id) {
      pointers.latest_declaration_id = row.declaration_id;
      pointers.latest_submitted_at = row.created_at;
    }
  }
  const latest = new Map<number, [seq: number, changeInstance: number]>();
  for (const row of rows.approvals) {
    const pointers = result.get(row.service_item_id);
    const [seq, changeInstance] = latest.get(row.service_item_id) ?? [0, 0];
    const later =
      row.approval_seq > seq || (row.approval_seq === seq && row.change_instance_id > changeInstance);
    if (!pointers || !later) continue;
    latest.set(row.service_item_id, [row.approval_seq, row.change_instance_id]);
    pointers.latest_approved_declaration_id = row.declaration_id;
    pointers.latest_approved_change_instance_id = row.change_instance_id;
    pointers.latest_approved_at = row.approved_at;
  }
  return result;
}

export async function itemPointers(
  store: CatalogStore,
  itemIds: readonly number[],
): Promise<Map<number, ItemPointers>> {
  return pointersOf(itemIds, await store.itemTransitions(itemIds));
}
