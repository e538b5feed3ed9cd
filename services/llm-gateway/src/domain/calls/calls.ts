import type { EventData, events } from '@pack/contracts';

export type GenerateRequest = EventData<typeof events.llmGenerateRequested>;

/**
 * What a call was made for: a generate request (processors, pipelines) or an admin's connection
 * test (endpoint 2), which the provider bills like any other call. The dashboard keeps them apart.
 */
export const CALL_KINDS = ['generation', 'connection_test'] as const;
export type CallKind = (typeof CALL_KINDS)[number];
export type GenerateResult = EventData<typeof events.llmGenerateCompleted>;

/**
 * One generate request, keyed by the request id: a claim by the replica that calls the provider
 * (with a lease), then a finished call record with everything spec 2.2 asks to keep. The stored
 * result is what a redelivered request republishes.
 */
export interface CallClaim {
  _id: string;
  state: 'claimed';
  /** The replica handling it; only the owner may finish it. */
  owner: string;
  lease_until: Date;
  claimed_at: Date;
  /** Earlier holders whose lease ran out (a crash): each may have called the provider. */
  takeovers?: number;
  model_id: number;
  processor_id: number | null;
  pipeline_id: number | null;
}

/** What every finished call of any kind measured: its outcome, tokens, prices and cost. */
export interface CallMeasured {
  finished_at: Date;
  /** 'ok' or the error kind. */
  outcome: string;
  input_tokens: number;
  output_tokens: number;
  /** The providers' own usage objects, one per provider call, as JSON text (user JSON). */
  raw_usage_json: string | null;
  /** The prices the cost was computed with, as they were at the time of the call. */
  input_price_per_1m_tokens: string | null;
  output_price_per_1m_tokens: string | null;
  cost: string | null;
  unpriced: boolean;
  latency_ms: number;
  attempts: number;
}

export interface FinishedCall extends CallMeasured {
  state: 'finished';
  /** Absent in records written before kinds were recorded: those are all generations. */
  kind?: 'generation';
  provider: string | null;
  model_name: string | null;
  /**
   * The Currency setting's code when the call was made: prices are taken to be in it, so it is
   * the currency of `cost`, whatever the setting says later (amounts are never converted).
   */
  currency?: string;
  mode: GenerateResult['mode'];
  /** Earlier holders of the request whose lease ran out; their attempts are counted in `attempts`. */
  takeovers?: number;
  /**
   * Fallbacks (docs/decisions/0045): the model the request asked for, the model whose
   * reply is the result (null: none answered), and on a fallback's record the asked model
   * (`fallback_from`) and why the call moved on. Absent in records written before fallbacks.
   */
  asked_model_id?: number;
  answered_model_id?: number | null;
  fallback_from?: number | null;
  fallback_reason?: string;
  /** On the asked model's record: how many fallback records follow (`fallbackCallId`). */
  fallbacks?: number;
  result: GenerateResult;
}

/**
 * The record of one fallback's call: the asked model's record is keyed by the request id and holds
 * the result; the n-th fallback's by `fallbackCallId(request id, n)`, with its own model, prices,
 * tokens and cost. All of a request's records are inserted together when it finishes.
 */
export type FallbackCall = Omit<FinishedCall, 'result' | 'takeovers'> & { model_id: number };

/** The key of the call record of a request's n-th fallback (n from 1). */
export const fallbackCallId = (requestId: string, n: number) => `${requestId}#fallback-${n}`;

/**
 * The record of one connection test that reached the provider (passed or failed), keyed by
 * `connectionTestCallId`: its model as tested, prices, tokens, cost and currency.
 */
export interface ConnectionTestCall extends CallMeasured {
  _id: string;
  kind: 'connection_test';
  state: 'finished';
  model_id: number;
  provider: string;
  model_name: string;
  currency: string;
}

/** A connection test's record key: its own prefix, so it never meets a generate request id. */
export const connectionTestCallId = (uuid: string) => `connection-test:${uuid}`;

export type CallRecord = CallClaim | (Omit<CallClaim, 'state' | 'lease_until'> & FinishedCall);

/** One call's contribution to the rollup of its kind, model, processor, currency and UTC hour. */
export interface RollupDelta {
  kind: CallKind;
  model_id: number;
  processor_id: number | null;
  hour: Date;
  error: boolean;
  input_tokens: number;
  output_tokens: number;
  unpriced: boolean;
  /** Cost in 1e-12 units of `currency` (rollup-math.ts). */
  cost_units: bigint;
  /** The currency of the call's prices and cost (the Currency setting when it was made). */
  currency: string;
  latency_bucket: number;
  /** The call was a fallback's: counted in the model's `fallbacks`. */
  fallback?: boolean;
}

/**
 * Sums of the calls of one kind, model, processor, currency and hour: a rollup document, or calls
 * to add to one.
 */
export interface Rollup {
  kind: CallKind;
  model_id: number;
  processor_id: number | null;
  hour: Date;
  calls: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  unpriced_calls: number;
  cost_units: bigint;
  /** The currency of `cost_units`; null in rollups written before currencies were recorded. */
  currency: string | null;
  /** Calls made as a fallback of another model. */
  fallbacks: number;
  /** Calls per latency bucket. */
  latency: Map<number, number>;
}
