import { mongo } from 'mongoose';
import { isDuplicateKey } from '@pack/db';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import {
  long,
  markOf,
  spendKey,
  type Added,
  type CallDocument,
  type SpendDocument,
} from './budget-documents';

/** A field no document has: an upsert filtered on it never matches, so it always inserts. */
const NEVER = '_never';

/**
 * The first count of calls of one month in ONE ordered `update` command (docs/decisions/0046):
 * each call's ledger entry inserted (an upsert whose filter never matches: an entry already
 * there is a duplicate key), then the month's `$inc` of their sum setting every call's mark,
 * matched only while none of the marks is there (an upsert: the month's first call creates the
 * document; a mark there is a duplicate key too). An ordered command stops at its first error,
 * on MongoDB and on FerretDB v1 (test/budget-spend.test.ts), so the `$inc` is applied only after
 * every entry went in, as by the two commands it replaces. 'stopped': nothing was added; which
 * entries went in their `counter` (`token`) tells, since FerretDB v1 does not name the statement
 * that failed.
 */
export async function countCommand(
  spends: mongo.Collection<{ _id: string }>,
  entries: CallDocument[],
  token: string,
): Promise<'added' | 'stopped'> {
  const { service_id, month } = entries[0]!;
  const marks = entries.map((entry) => markOf(entry._id));
  const units = entries.reduce((sum, entry) => sum + BigInt(entry.units.toString()), 0n);
  try {
    await spends.bulkWrite(
      [
        ...entries.map(({ _id, ...fields }) => ({
          updateOne: {
            filter: { _id, [NEVER]: { $in: [] } },
            update: { $setOnInsert: { ...fields, counter: token } },
            upsert: true,
          },
        })),
        {
          updateOne: {
            filter: {
              _id: spendKey(service_id, month),
              ...Object.fromEntries(marks.map((mark) => [mark, { $exists: false }])),
            },
            update: {
              $inc: { units: long(units), unpriced_calls: entries.filter((entry) => entry.unpriced).length },
              $set: Object.fromEntries(marks.map((mark) => [mark, token])),
              $setOnInsert: { service_id, month },
            },
            upsert: true,
          },
        },
      ],
      { ordered: true },
    );
    return 'added';
  } catch (error) {
    if (stoppedAtDuplicate(error)) return 'stopped';
    throw error;
  }
}

function stoppedAtDuplicate(error: unknown): boolean {
  if (error instanceof mongo.MongoBulkWriteError) {
    const errors = [error.writeErrors].flat() as { code?: number }[];
    return errors.length > 0 && errors.every((each) => each.code === 11000);
  }
  return error instanceof mongo.MongoServerError && error.code === 11000;
}

/**
 * The `$inc` of the call's month with its mark set to `token`, unless a mark is there: then the
 * token of the count whose `$inc` holds it; 'applied' when the call is settled already (`applied`
 * reads its entry). A call added alone: a group's command stopped, or a repeat.
 */
export async function addAlone(
  spends: mongo.Collection<SpendDocument>,
  entry: CallDocument,
  token: string,
  applied: () => Promise<boolean>,
): Promise<Added> {
  const key = spendKey(entry.service_id, entry.month);
  const mark = markOf(entry._id);
  const field = mark.slice('adding.'.length);
  const unpriced = entry.unpriced ? 1 : 0;
  // Each round ends, or sees the month document created by another call (the next round's
  // update then matches): at most two rounds unless the mark came and went, which only happens
  // once the entry is applied, when there is nothing to add.
  return retryOnConflict<Added>(
    async () => {
      const updated = await spends.updateOne(
        { _id: key, [mark]: { $exists: false } },
        { $inc: { units: entry.units, unpriced_calls: unpriced }, $set: { [mark]: token } },
      );
      if (updated.modifiedCount === 1) return 'added';
      // Not matched: the month has no document yet, or the mark is there (done).
      try {
        await spends.insertOne({
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
        const marked = await spends.findOne(
          { _id: key, [mark]: { $exists: true } },
          { projection: { [mark]: 1 } },
        );
        if (marked) {
          const by = marked.adding?.[field];
          return { by: typeof by === 'string' ? by : undefined };
        }
        // No mark: removed by the settling or by a repeat taking its second add back, both only
        // once the entry is applied; or the document is new and the next round adds.
        if (await applied()) return 'applied';
      }
      return LOST_RACE;
    },
    {
      tries: 3,
      keptChanging: () => new Error(`could not add call ${entry._id} to the spend of ${key}`),
    },
  );
}
