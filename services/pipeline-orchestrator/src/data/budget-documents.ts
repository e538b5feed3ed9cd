import { mongo } from 'mongoose';
import type { MonthSpend } from '../domain/budgets/store';

// The documents of the AI budgets (docs/decisions/0046) and the names and values they use.

export const BUDGETS_COLLECTION = 'ai_budgets';
/** The months' spend and the ledger of counted calls, side by side: a count is one command (0046). */
export const BUDGET_SPEND_COLLECTION = 'ai_budget_spend';
/** Ledger entries of the earlier layout, in a collection apart (docs/decisions/0046): their repeats are refused. */
export const BUDGET_CALLS_COLLECTION = 'ai_budget_calls';

export interface BudgetDocument {
  _id: number;
  monthly_limit: string | null;
  updated_at: Date;
}

/** One Service's UTC month: `units` (Int64, 1e-12 currency units) and the calls being added. */
export interface SpendDocument {
  _id: string;
  service_id: number;
  month: string;
  units: mongo.Long;
  unpriced_calls: number;
  /** Request ids (as field names) whose `$inc` is done but not yet settled: the adding count's token. */
  adding?: Record<string, string | true>;
}

/** One counted call: the ledger that makes counting idempotent across replicas and redeliveries. */
export interface CallDocument {
  _id: string;
  service_id: number;
  month: string;
  units: mongo.Long;
  unpriced: boolean;
  applied: boolean;
  /** Set when a repeat's `$inc` was the call's one (it came before the first counter's): its token. */
  added_by?: string;
  /** The token of the count that inserted the entry: after a failed count command, is it ours? */
  counter?: string;
  at: Date;
}

/** What an add found: it added, the call is settled, or another count's `$inc` (its token) holds the mark. */
export type Added = 'added' | 'applied' | { by: string | undefined };

export const long = (units: bigint) => mongo.Long.fromBigInt(units);
export const spendKey = (serviceId: number, month: string) => `${serviceId}:${month}`;
/** A request id as a field name: no '.', no leading '$' (FerretDB refuses them). */
export const markOf = (requestId: string) => `adding.r${requestId.replace(/[.$]/g, '_')}`;

export function spendOf(found: Pick<SpendDocument, 'units' | 'unpriced_calls'> | null): MonthSpend {
  if (!found) return { units: 0n, unpriced_calls: 0 };
  const units = found.units as mongo.Long | number | undefined;
  const unpriced = found.unpriced_calls as unknown as mongo.Long | number | undefined;
  return {
    units: units === undefined ? 0n : BigInt(units.toString()),
    unpriced_calls: unpriced === undefined ? 0 : Number(unpriced.toString()),
  };
}
