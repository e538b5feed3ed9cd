import type { CallClaim, CallRecord, ConnectionTestCall, FallbackCall, FinishedCall, Rollup } from './calls';

/** Everything the generation needs of claims and call records; data/call-repository.ts implements it. */
export interface CallStore {
  /** Inserts the claim; false when a record with this request id exists (unique _id). */
  insertClaim(claim: CallClaim): Promise<boolean>;
  /** The finished record of a request id, else its claim, else null. */
  find(requestId: string): Promise<CallRecord | null>;
  /** Takes over a claim whose lease ended before `now` (counted in `takeovers`); false when another replica did first. */
  takeOver(requestId: string, now: Date, owner: string, leaseUntil: Date): Promise<boolean>;
  /** Extends `owner`'s live claim; false when it is no longer the owner's (taken over, or finished). */
  renew(requestId: string, owner: string, leaseUntil: Date): Promise<boolean>;
  /**
   * Records the finished call and its fallbacks' calls (one insert, group-committed); false when
   * the request id was finished already (by a replica that took over).
   */
  finish(claim: CallClaim, finished: FinishedCall, fallbacks?: readonly FallbackCall[]): Promise<boolean>;
  /** Records a connection test's call (with the finishes' inserts); false when its id is recorded already. */
  recordTest(call: ConnectionTestCall): Promise<boolean>;
}

/** The hourly and daily sums of calls the dashboard reads; data/rollup-repository.ts implements it. */
export interface RollupStore {
  /** Adds each sum to its hour and its day with `$inc`: safe under concurrency, one command. */
  addAll(sums: readonly Rollup[]): Promise<void>;
  /** The rollups of the hours in [from, to). */
  between(from: Date, to: Date): Promise<Rollup[]>;
}
