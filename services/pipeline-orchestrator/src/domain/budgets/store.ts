/** A Service's spend of one UTC month: 1e-12 currency units of priced calls, and unpriced calls. */
export interface MonthSpend {
  units: bigint;
  unpriced_calls: number;
}

/** One generate call's cost, counted once by its request id. */
export interface CountedCall {
  request_id: string;
  service_id: number;
  month: string;
  units: bigint;
  unpriced: boolean;
}

export interface BudgetStore {
  /** The Service's monthly limit as set (decimal string), or null: none. */
  limit(serviceId: number): Promise<string | null>;
  setLimit(serviceId: number, limit: string | null): Promise<void>;
  spend(serviceId: number, month: string): Promise<MonthSpend>;
  /** Adds the call to its Service's month once per request id (any replica, any redelivery). */
  count(call: CountedCall): Promise<boolean>;
  /** Every Service with a limit, and its spend of `month` (the used-ratio gauge). */
  limited(month: string): Promise<{ service_id: number; limit: string; spend: MonthSpend }[]>;
}
