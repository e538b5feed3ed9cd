import type { Connection } from 'mongoose';
import { insertAll, whileUnavailable } from '@pack/db';
import {
  fallbackCallId,
  type CallClaim,
  type CallRecord,
  type ConnectionTestCall,
  type FallbackCall,
  type FinishedCall,
} from '../domain/calls/calls';
import { type CallStore } from '../domain/calls/store';
import { GroupCommit } from '@pack/reliability';

/** Finished call records (everything spec 2.2 asks to keep), inserted once per request id. */
export const LLM_CALLS_COLLECTION = 'llm_calls';
/** Claims: which replica calls the provider for a request id, with its lease. */
export const LLM_CALL_CLAIMS_COLLECTION = 'llm_call_claims';

type FinishedRecord = Extract<CallRecord, { state: 'finished' }>;
/** A fallback's call record (no result: the asked model's record holds it). */
type FallbackRecord = Omit<CallClaim, 'state' | 'lease_until'> & FallbackCall;
type StoredCall = FinishedRecord | FallbackRecord | ConnectionTestCall;

/**
 * Claims and finished call records, one each per request id (the unique `_id`), both only ever
 * inserted: FerretDB runs the inserts of one command as one statement batch (ten documents took
 * about as long as one) but an update as a read and a write-back, so inserts are group-committed
 * (@pack/reliability GroupCommit): while one `insert` is under way, the next requests' documents go
 * together in the next one, so under load a call costs a fraction of a command and an idle
 * gateway waits for nothing.
 */
export class CallRepository implements CallStore {
  private readonly calls;
  private readonly claimsCollection;
  /**
   * The requests of one event-loop turn (deliveries read together) claim in one insert, as their
   * finishes (replies read together) go in one: the first waits for the end of its turn.
   */
  private readonly claims = new GroupCommit<CallClaim, boolean>(
    (claims) => insertAll(this.claimsCollection, claims),
    { endOfTurn: true },
  );
  /**
   * A request's records go together (the asked model's first): its result is the first's. They
   * linger (`lingerMs`) for other requests' records: at a request at a time too, a few calls share
   * one insert, written after their results went out (docs/decisions/0052).
   */
  private readonly finishes;

  constructor(connection: Connection, lingerMs = 0) {
    this.finishes = new GroupCommit<StoredCall[], boolean>(
      async (groups) => {
        const inserted = await insertAll(this.calls, groups.flat());
        let at = 0;
        return groups.map((group) => {
          const first = inserted[at]!;
          at += group.length;
          return first;
        });
      },
      { lingerMs, endOfTurn: true },
    );
    this.calls = connection.collection<StoredCall>(LLM_CALLS_COLLECTION);
    this.claimsCollection = connection.collection<CallClaim>(LLM_CALL_CLAIMS_COLLECTION);
  }

  insertClaim(claim: CallClaim): Promise<boolean> {
    return this.claims.run(claim);
  }

  async find(requestId: string): Promise<CallRecord | null> {
    const [finished, claim] = await Promise.all([
      this.calls.findOne({ _id: requestId }) as Promise<FinishedRecord | null>,
      this.claimsCollection.findOne({ _id: requestId }),
    ]);
    return finished ?? claim;
  }

  /** Atomic on MongoDB and on our FerretDB build (docs/decisions/0002). */
  async takeOver(requestId: string, now: Date, owner: string, leaseUntil: Date): Promise<boolean> {
    const taken = await this.claimsCollection.updateOne(
      { _id: requestId, state: 'claimed', lease_until: { $lt: now } },
      { $set: { owner, lease_until: leaseUntil }, $inc: { takeovers: 1 } },
    );
    return taken.modifiedCount === 1;
  }

  async renew(requestId: string, owner: string, leaseUntil: Date): Promise<boolean> {
    const renewed = await this.claimsCollection.updateOne(
      { _id: requestId, state: 'claimed', owner },
      { $set: { lease_until: leaseUntil } },
    );
    return renewed.modifiedCount === 1;
  }

  /**
   * The first finish of a request id wins (unique `_id`); a later one, by any replica, is refused.
   * The provider was called and paid: while the database is away (FerretDB or PostgreSQL
   * restarting) the records are written again until it is back, instead of the call being made
   * again on the message's redelivery (docs/decisions/0051).
   */
  finish(
    claim: CallClaim,
    finished: FinishedCall,
    fallbacks: readonly FallbackCall[] = [],
  ): Promise<boolean> {
    const { state: _claimed, lease_until: _lease, ...claimed } = claim;
    const { takeovers: _takeovers, ...shared } = claimed;
    return whileUnavailable(
      () =>
        this.finishes.run([
          { ...claimed, ...finished },
          ...fallbacks.map((call, index) => ({
            ...shared,
            ...call,
            _id: fallbackCallId(claim._id, index + 1),
          })),
        ]),
      true,
    );
  }

  /** Like a finish: the provider was called and paid, so the record waits out a database restart. */
  recordTest(call: ConnectionTestCall): Promise<boolean> {
    return whileUnavailable(() => this.finishes.run([call]), true);
  }
}
