import { mongo, type Connection } from 'mongoose';
import { isDuplicateKey } from '@pack/db';
import type { CallClaim, CallRecord, CallStore, FinishedCall } from '../domain/calls';
import { GroupCommit } from '../domain/group-commit';

export const LLM_CALLS_COLLECTION = 'llm_calls';

const DUPLICATE_KEY = 11000;

interface Finish {
  requestId: string;
  owner: string;
  finished: FinishedCall;
}

/**
 * The call records of generate requests, one per request id (the unique `_id`). Claims and
 * finishes are group-committed (domain/group-commit.ts): while one command is under way, the
 * next requests' claims go together in one `insert`, their finishes in one `update`, so under
 * load each request costs a fraction of a command and an idle gateway waits for nothing.
 */
export class CallRepository implements CallStore {
  private readonly calls;
  private readonly claims = new GroupCommit<CallClaim, boolean>((claims) => this.insertAll(claims));
  private readonly finishes = new GroupCommit<Finish, boolean>((finishes) => this.finishAll(finishes));

  constructor(connection: Connection) {
    this.calls = connection.collection<CallRecord>(LLM_CALLS_COLLECTION);
  }

  insertClaim(claim: CallClaim): Promise<boolean> {
    return this.claims.run(claim);
  }

  find(requestId: string): Promise<CallRecord | null> {
    return this.calls.findOne({ _id: requestId });
  }

  /** Atomic on MongoDB and on our FerretDB build (docs/decisions/0002). */
  async takeOver(requestId: string, now: Date, owner: string, leaseUntil: Date): Promise<boolean> {
    const taken = await this.calls.updateOne(
      { _id: requestId, state: 'claimed', lease_until: { $lt: now } },
      { $set: { owner, lease_until: leaseUntil } },
    );
    return taken.modifiedCount === 1;
  }

  finish(requestId: string, owner: string, finished: FinishedCall): Promise<boolean> {
    return this.finishes.run({ requestId, owner, finished });
  }

  /** Unordered: a duplicate (a request claimed before) does not stop the others. */
  private async insertAll(claims: CallClaim[]): Promise<boolean[]> {
    try {
      await this.calls.insertMany(claims, { ordered: false });
      return claims.map(() => true);
    } catch (error) {
      if (claims.length === 1 && isDuplicateKey(error)) return [false];
      if (!(error instanceof mongo.MongoBulkWriteError)) throw error;
      const failed = error.writeErrors;
      const writeErrors = Array.isArray(failed) ? failed : [failed];
      if (writeErrors.some((write) => write.code !== DUPLICATE_KEY)) throw error;
      const duplicates = new Set(writeErrors.map((write) => write.index));
      return claims.map((_, index) => !duplicates.has(index));
    }
  }

  /**
   * Each update is conditional on the claim still being the owner's (atomic per document). The
   * command only counts the matches; when one is missing (a lease ran out and another replica
   * took over, rare), the records tell which: ours are finished and still name us as the owner.
   */
  private async finishAll(finishes: Finish[]): Promise<boolean[]> {
    const done = await this.calls.bulkWrite(
      finishes.map(({ requestId, owner, finished }) => ({
        updateOne: { filter: { _id: requestId, state: 'claimed', owner }, update: { $set: finished } },
      })),
      { ordered: false },
    );
    if (done.modifiedCount === finishes.length) return finishes.map(() => true);
    const records = await this.calls
      .find({ _id: { $in: finishes.map((finish) => finish.requestId) } })
      .toArray();
    const owners = new Map(finishes.map((finish) => [finish.requestId, finish.owner]));
    const ours = new Set(
      records
        .filter((record) => record.state === 'finished' && owners.get(record._id) === record.owner)
        .map((record) => record._id),
    );
    return finishes.map((finish) => ours.has(finish.requestId));
  }
}
