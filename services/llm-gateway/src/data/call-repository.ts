import type { Connection } from 'mongoose';
import { isDuplicateKey } from '@pack/db';
import type { CallClaim, CallRecord, CallStore, FinishedCall } from '../domain/calls';

export const LLM_CALLS_COLLECTION = 'llm_calls';

/** The call records of generate requests, one per request id (the unique `_id`). */
export class CallRepository implements CallStore {
  private readonly calls;

  constructor(connection: Connection) {
    this.calls = connection.collection<CallRecord>(LLM_CALLS_COLLECTION);
  }

  async insertClaim(claim: CallClaim): Promise<boolean> {
    try {
      await this.calls.insertOne(claim);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
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

  async finish(requestId: string, owner: string, finished: FinishedCall): Promise<boolean> {
    const done = await this.calls.updateOne({ _id: requestId, state: 'claimed', owner }, { $set: finished });
    return done.modifiedCount === 1;
  }
}
