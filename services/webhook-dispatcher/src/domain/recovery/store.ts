import type { RecoveryRecord } from '../model';

/** Recoveries; every change is one conditional single-document update. */
export interface RecoveryStore {
  /** Inserts it, or returns the recovery already RUNNING for the webhook (nothing inserted). */
  start(record: RecoveryRecord): Promise<{ created: boolean; recovery: RecoveryRecord }>;
  find(id: string): Promise<RecoveryRecord | null>;
  /** A RUNNING recovery that nobody holds (or whose lease expired), under a new lease. */
  claim(now: Date, leaseUntil: Date, token: string, holder: string): Promise<RecoveryRecord | null>;
  /** Moves the cursor and counts the resends of one batch, under the lease; the record after, or null. */
  advance(
    id: string,
    token: string,
    from: number,
    to: number,
    resent: number,
    leaseUntil: Date,
  ): Promise<RecoveryRecord | null>;
  /** Ends it (DONE or CANCELLED) under the lease; frees the webhook for another recovery. */
  end(id: string, token: string, state: 'DONE' | 'CANCELLED', reason: string | null): Promise<boolean>;
  /** Gives the lease back (this replica stops). */
  release(id: string, token: string): Promise<void>;
  /** RUNNING recoveries and the resends they still have to queue (for the metrics). */
  progress(): Promise<{ running: number; remaining: number }>;
}
