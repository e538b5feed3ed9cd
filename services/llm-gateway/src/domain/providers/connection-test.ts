import { BadGatewayError, GatewayTimeoutError } from '@pack/errors';
import {
  costOf,
  ProviderError,
  Redactor,
  secretsOf,
  type Cost,
  type ProviderConfig,
  type Usage,
} from '@pack/llm-providers';
import type { EffectiveModel } from '../models/llm-models';
import type { ConnectionTestCalls } from '../calls/test-calls';
import { reliableAdapter, type CallObserver, type Dispatchers } from './reliable-adapter';
import { DEFAULT_RETRY_POLICY, type Breakers, type BreakerState, type RetryPolicy } from './reliability';

/** Reasoning models spend tokens before they answer; a smaller budget fails healthy models. */
export const TEST_MAX_OUTPUT_TOKENS = 64;
const TEST_PROMPT = 'Reply with the single word: pong';
const EXCERPT = 200;

export interface ConnectionTestResult {
  ok: true;
  latency_ms: number;
  reply_excerpt: string;
  usage: { input_tokens: number; output_tokens: number };
  cost: Cost;
  /** The currency of `cost` and of the model's prices (the Currency setting's code). */
  currency: string;
  attempts: number;
  breaker: BreakerState;
}

export type { CallLabels, CallObserver, Dispatchers } from './reliable-adapter';

/**
 * Sends one short prompt to a model (stored fields overridden for the test) through the guard.
 * Every test that reaches the provider, passed or failed, is recorded as a call (`calls`).
 */
export class ConnectionTester {
  constructor(
    private readonly dispatchers: Dispatchers,
    private readonly breakers: Breakers,
    private readonly observer: CallObserver,
    private readonly calls: Pick<ConnectionTestCalls, 'record'>,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  /** `asStored`: the model is tested as stored (no field overridden), so a success closes its breaker. */
  async test(model: EffectiveModel, asStored = false): Promise<ConnectionTestResult> {
    const probing = {
      run: <T>(modelId: number, attempt: () => Promise<T>) => this.breakers.probe(modelId, attempt, asStored),
    };
    const adapter = reliableAdapter(model, this.dispatchers, probing, this.observer, this.policy);
    const messages = [
      ...(model.prompt ? [{ role: 'system' as const, content: model.prompt }] : []),
      { role: 'user' as const, content: TEST_PROMPT },
    ];
    const started = Date.now();
    const outcome = (usage: Usage | null, error: string | null) => ({
      usage,
      error,
      attempts: adapter.attempts,
      latencyMs: Date.now() - started,
    });
    let result;
    try {
      result = await adapter.generate({
        model: model.model_name,
        messages,
        maxOutputTokens: TEST_MAX_OUTPUT_TOKENS,
      });
    } catch (error) {
      await this.calls.record(model, outcome(null, error instanceof ProviderError ? error.kind : 'unknown'));
      throw asHttpError(error, model.timeout, this.breakers.state(model.id));
    }
    const call = await this.calls.record(model, outcome(result.usage, null));
    return {
      ok: true,
      latency_ms: call.latency_ms,
      // A provider may echo what it was sent: the excerpt loses the secrets before it is cut.
      reply_excerpt: new Redactor(secretsOf(configOf(model))).redact(result.text).slice(0, EXCERPT),
      usage: plainUsage(result.usage),
      cost: costOf(result.usage, model),
      currency: call.currency,
      attempts: adapter.attempts,
      breaker: this.breakers.state(model.id),
    };
  }
}

const configOf = (model: EffectiveModel) =>
  ({ provider: model.provider, ...model.extra_data }) as ProviderConfig;

function plainUsage(usage: Usage) {
  return { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens };
}

/** Provider messages are already scrubbed of the call's secrets by the adapters. */
function asHttpError(error: unknown, timeout: number, breaker: BreakerState): Error {
  if (!(error instanceof ProviderError)) return error as Error;
  const suffix = ` (circuit breaker ${breaker})`;
  if (error.kind === 'timeout')
    return new GatewayTimeoutError(
      `the provider did not answer within the model timeout of ${timeout} s${suffix}`,
    );
  return new BadGatewayError(`connection test failed (${error.kind}): ${error.message}${suffix}`);
}
