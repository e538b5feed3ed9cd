import { mongo, type Connection } from 'mongoose';
import { isDuplicateKey } from '@pack/db';
import type { CallClaim, CallRecord, CallStore, FinishedCall } from '../domain/calls';
import { GroupCommit } from '../domain/group-commit';

export const LLM_CALLS_COLLECTION = 'llm_calls';

const DUPLICATE_KEY = 11000;

/**
 * The call records of generate requests, one per request id (the unique `_id`). Claims are
 * group-committed (domain/group-commit.ts): while one `insert` is under way, the next requests'
 * claims go together in the next one, so under load a claim costs a fraction of a command (ten
 * documents in one insert took about as long as one) and an idle gateway waits for nothing.
 */
export class CallRepository implements CallStore {
  private readonly calls;
  private readonly claims = new GroupCommit<CallClaim, boolean>((claims) => this.insertAll(claims));

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

  /**
   * Not grouped: FerretDB applies the updates of one command one after the other, so a command
   * of ten took as long as ten, where separate ones run side by side (other documents, other locks).
   */
  async finish(requestId: string, owner: string, finished: FinishedCall): Promise<boolean> {
    const done = await this.calls.updateOne({ _id: requestId, state: 'claimed', owner }, { $set: finished });
    return done.modifiedCount === 1;
  }

  /** Unordered: a duplicate (a request claimed before) does not stop the others. */
  private async insertAll(claims: CallClaim[]): Promise<boolean[]> {
    try {
      await this.calls.insertMany(claims, { ordered: false });
      return claims.map(() => true);
    } catch (error) {
      if (claims.length === 1 && isDuplicateKey(error)) return [false];
      if (!(error instanceof mongo.MongoBulkWriteError)) throw error;
      const failed: unknown = error.writeErrors;
      const writeErrors = (Array.isArray(failed) ? failed : [failed]) as mongo.WriteError[];
      if (writeErrors.some((write) => write.code !== DUPLICATE_KEY)) throw error;
      const duplicates = new Set(writeErrors.map((write) => write.index));
      return claims.map((_, index) => !duplicates.has(index));
    }
  }
}
