import type { mongo } from 'mongoose';
import type { ServiceItemRecord } from '../domain/model';
import type { PointerHeads } from '../domain/store';

/** Items with this `pointers_version` keep their pointers (new ones, and backfilled ones). */
export const POINTERS_VERSION = 1;

type Items = mongo.Collection<ServiceItemRecord>;
type Filter = mongo.Filter<ServiceItemRecord>;

/** The item's submission pointer is older than `submission` (or absent). */
function submissionOlder(submission: NonNullable<PointerHeads['submission']>): Filter {
  return {
    $or: [
      { latest_declaration_id: { $exists: false } },
      { latest_declaration_id: { $lt: submission.declaration_id } },
    ],
  };
}

/** The item's approval pointer is older than `approval` in decision 0005's order (or absent). */
function approvalOlder(approval: NonNullable<PointerHeads['approval']>): Filter {
  return {
    $or: [
      { latest_approval_seq: { $exists: false } },
      { latest_approval_seq: { $lt: approval.approval_seq } },
      {
        latest_approval_seq: approval.approval_seq,
        latest_approved_change_instance_id: { $lt: approval.change_instance_id },
      },
    ],
  };
}

/**
 * Each pointer moves only forward: one conditional update per part, pinned to the item's `_id`
 * (atomic on MongoDB and on our FerretDB build, decision 0002), so replays, repairs and
 * concurrent writers in any order end at the latest. A change that is both (an auto-approved
 * submission) first tries one update for both parts: one command when both are newest.
 */
export async function advanceItemPointers(items: Items, itemId: number, heads: PointerHeads): Promise<void> {
  const { submission, approval } = heads;
  const submissionSet = submission && {
    latest_declaration_id: submission.declaration_id,
    latest_submitted_at: submission.submitted_at,
  };
  const approvalSet = approval && {
    latest_approval_seq: approval.approval_seq,
    latest_approved_declaration_id: approval.declaration_id,
    latest_approved_change_instance_id: approval.change_instance_id,
    latest_approved_at: approval.approved_at,
  };
  if (submission && approval) {
    const both = await items.updateOne(
      { _id: itemId, $and: [submissionOlder(submission), approvalOlder(approval)] },
      { $set: { ...submissionSet, ...approvalSet } },
    );
    if (both.matchedCount === 1) return;
  }
  await Promise.all([
    submission && items.updateOne({ _id: itemId, ...submissionOlder(submission) }, { $set: submissionSet! }),
    approval && items.updateOne({ _id: itemId, ...approvalOlder(approval) }, { $set: approvalSet! }),
  ]);
}

/** Items without `pointers_version`: a scan of the items (never of their history). */
export async function itemsWithoutPointers(items: Items, limit: number): Promise<number[]> {
  const found = await items
    .find({ pointers_version: { $exists: false } }, { projection: { _id: 1 }, sort: { _id: 1 }, limit })
    .toArray();
  return found.map((item) => item._id);
}

export async function markItemPointers(items: Items, itemIds: readonly number[]): Promise<void> {
  if (itemIds.length === 0) return;
  await items.updateMany(
    { _id: itemIds.length === 1 ? itemIds[0]! : { $in: [...itemIds] } },
    { $set: { pointers_version: POINTERS_VERSION } },
  );
}
