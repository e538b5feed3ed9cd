import {
  createAdapter,
  ProviderError,
  type AdapterOptions,
  type GenerateRequest,
  type GenerateResult,
  type LlmAdapter,
  type ProviderConfig,
} from '@pack/llm-providers';
import type { EffectiveModel } from '../models/llm-models';
import { withRetries, type Breakers, type RetryPolicy } from './reliability';

export interface CallLabels {
  provider: string;
  model_id: number;
}

/** What the metrics see of provider calls: one report per attempt, one per retry. */
export interface CallObserver {
  succeeded(labels: CallLabels, latencyMs: number, result: GenerateResult, model: EffectiveModel): void;
  failed(labels: CallLabels, latencyMs: number, kind: string): void;
  retried(labels: CallLabels): void;
}

/** Where connections go, and the service's genai token cache. */
export type Dispatchers = Pick<AdapterOptions, 'dispatcher' | 'insecureDispatcher' | 'tokenCache'>;

/** A model's adapter with the retry policy and breaker around every attempt, and its tally. */
export interface ReliableAdapter extends LlmAdapter {
  /** Provider calls made so far (retries and a structured re-ask included). */
  readonly attempts: number;
  /** Time spent in provider calls so far, in ms, the backoff waits between retries included. */
  readonly providerMs: number;
}

/**
 * One adapter per use (a connection test, a generate request): each `generate` goes through the
 * model's breaker and the retry policy, and every attempt is reported to the observer.
 */
export function reliableAdapter(
  model: EffectiveModel,
  dispatchers: Dispatchers,
  breakers: Pick<Breakers, 'run'>,
  observer: CallObserver,
  policy: RetryPolicy,
): ReliableAdapter {
  const config = { provider: model.provider, ...model.extra_data } as ProviderConfig;
  const adapter = createAdapter(config, { timeout: model.timeout, ...dispatchers });
  const labels = { provider: model.provider, model_id: model.id };
  const tally = { attempts: 0, providerMs: 0 };
  const once = async (request: GenerateRequest) => {
    tally.attempts += 1;
    const began = performance.now();
    try {
      const result = await adapter.generate(request);
      observer.succeeded(labels, performance.now() - began, result, model);
      return result;
    } catch (error) {
      const ms = performance.now() - began;
      observer.failed(labels, ms, error instanceof ProviderError ? error.kind : 'unknown');
      throw error;
    }
  };
  return {
    get attempts() {
      return tally.attempts;
    },
    get providerMs() {
      return tally.providerMs;
    },
    async generate(request) {
      const began = performance.now();
      try {
        const { value } = await withRetries(
          () => breakers.run(model.id, () => once(request)),
          policy,
          () => observer.retried(labels),
        );
        return value;
      } finally {
        tally.providerMs += performance.now() - began;
      }
    },
  };
}
