import type { mongo } from 'mongoose';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import type { ResponseRecord } from '../domain/model';

/** Candidates a claim tries in a row before it leaves the next one to the next poll. */
const CLAIM_TRIES = 5;

/**
 * A due SCHEDULED fire, or one still WAITING whose lease expired (its replica died
 * mid-delivery), under a new lease; the oldest due first. Two reads, each an equality on
 * `state` sorted on the time field, limit 1 (answered by our FerretDB from the `due` and `lease`
 * indexes; a range would read every document of the state per poll, docs/decisions/0033
 * amendment 3), give the earliest fire and the earliest lease; whether each is due or expired is
 * decided here. One conditional update pinned to the candidate's `_id` takes it (on FerretDB an
 * update pinning no `_id` holds the whole collection while it scans, tools/ferretdb); one that
 * another replica took meanwhile no longer meets the condition, and the next one is tried.
 */
export function claimDue(
  responses: mongo.Collection<ResponseRecord>,
  now: Date,
  leaseUntil: Date,
  token: string,
): Promise<ResponseRecord | null> {
  const due = { state: 'SCHEDULED' as const, due_at: { $lte: now } };
  const expired = { state: 'WAITING_FOR_RESPONSE' as const, lease_until: { $lt: now } };
  const projection = { _id: 1, due_at: 1, lease_until: 1 };
  const earliest = (state: ResponseRecord['state'], by: 'due_at' | 'lease_until') =>
    responses.find({ state }, { sort: { [by]: 1 }, limit: 1, projection }).toArray();
  return retryOnConflict(
    async (attempt) => {
      const [scheduled, waiting] = await Promise.all([
        earliest('SCHEDULED', 'due_at'),
        earliest('WAITING_FOR_RESPONSE', 'lease_until'),
      ]);
      const found = [
        ...scheduled.filter((r) => r.due_at.getTime() <= now.getTime()),
        ...waiting.filter((r) => r.lease_until !== null && r.lease_until.getTime() < now.getTime()),
      ];
      const candidate = found.sort((a, b) => a.due_at.getTime() - b.due_at.getTime())[0];
      if (!candidate) return null;
      const claimed = await responses.findOneAndUpdate(
        { _id: candidate._id, $or: [due, expired] },
        {
          $set: {
            state: 'WAITING_FOR_RESPONSE',
            lease_until: leaseUntil,
            lease_token: token,
            updated_at: now,
          },
        },
        { returnDocument: 'after' },
      );
      if (claimed) return claimed;
      // Taken by others CLAIM_TRIES times in a row: the next poll looks again.
      return attempt < CLAIM_TRIES ? LOST_RACE : null;
    },
    { tries: CLAIM_TRIES, keptChanging: () => new Error('never thrown: the last try answers null') },
  );
}
