import { randomUUID } from 'node:crypto';
import { costOf, isUnpriced, type Usage } from '@pack/llm-providers';
import { connectionTestCallId, type ConnectionTestCall } from './calls';
import type { RollupBatcher } from './rollup-batch';
import { callMeasures } from './rollup-math';
import type { CallStore } from './store';
import type { EffectiveModel } from '../models/llm-models';

/** What became of one connection test that reached the adapter. */
export interface TestOutcome {
  /** The provider's usage of the reply; null when no reply came. */
  usage: Usage | null;
  /** The error kind; null when text came back. */
  error: string | null;
  attempts: number;
  latencyMs: number;
}

export interface TestCallDeps {
  calls: Pick<CallStore, 'recordTest'>;
  rollups: Pick<RollupBatcher, 'add'>;
  /** The Currency setting's code now: the currency the tested model's prices are taken to be in. */
  currency(): string;
}

/**
 * Connection tests as calls of their own kind: the provider bills them like any other call, so
 * each one is recorded (model as tested, tokens, prices, cost, currency) and counted in the
 * dashboard's rollups under `connection_test`, apart from generations. Each test has its own id,
 * inserted once; its rollup share is added only by the insert that stored it, so a write retried
 * over a database restart never counts it twice.
 */
export class ConnectionTestCalls {
  constructor(private readonly deps: TestCallDeps) {}

  async record(model: EffectiveModel, outcome: TestOutcome): Promise<ConnectionTestCall> {
    const cost = outcome.usage ? costOf(outcome.usage, model) : null;
    const call: ConnectionTestCall = {
      _id: connectionTestCallId(randomUUID()),
      kind: 'connection_test',
      state: 'finished',
      model_id: model.id,
      finished_at: new Date(),
      provider: model.provider,
      model_name: model.model_name,
      outcome: outcome.error ?? 'ok',
      input_tokens: outcome.usage?.input_tokens ?? 0,
      output_tokens: outcome.usage?.output_tokens ?? 0,
      raw_usage_json: outcome.usage ? JSON.stringify(outcome.usage.raw) : null,
      input_price_per_1m_tokens: model.input_price_per_1m_tokens ?? null,
      output_price_per_1m_tokens: model.output_price_per_1m_tokens ?? null,
      cost: cost === null || isUnpriced(cost) ? null : cost,
      unpriced: cost !== null && isUnpriced(cost),
      currency: this.deps.currency(),
      latency_ms: outcome.latencyMs,
      attempts: outcome.attempts,
    };
    if (await this.deps.calls.recordTest(call))
      await this.deps.rollups.add({
        kind: 'connection_test',
        model_id: call.model_id,
        processor_id: null,
        ...callMeasures(call),
        currency: call.currency,
      });
    return call;
  }
}
