import { BadGatewayError, GatewayTimeoutError } from '@pack/errors';
import {
  costOf,
  createAdapter,
  ProviderError,
  type AdapterOptions,
  type Cost,
  type ProviderConfig,
  type Usage,
} from '@pack/llm-providers';
import type { EffectiveModel } from './llm-models';
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from './reliability';

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
  attempts: number;
}

export type Dispatchers = Pick<AdapterOptions, 'dispatcher' | 'insecureDispatcher'>;

/** Sends one short prompt to a model (stored fields overridden for the test) through the guard. */
export class ConnectionTester {
  constructor(
    private readonly dispatchers: Dispatchers,
    private readonly policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  ) {}

  async test(model: EffectiveModel): Promise<ConnectionTestResult> {
    const config = { provider: model.provider, ...model.extra_data } as ProviderConfig;
    const adapter = createAdapter(config, { timeout: model.timeout, ...this.dispatchers });
    const messages = [
      ...(model.prompt ? [{ role: 'system' as const, content: model.prompt }] : []),
      { role: 'user' as const, content: TEST_PROMPT },
    ];
    const started = Date.now();
    try {
      const { value, attempts } = await withRetries(
        () =>
          adapter.generate({ model: model.model_name, messages, maxOutputTokens: TEST_MAX_OUTPUT_TOKENS }),
        this.policy,
      );
      return {
        ok: true,
        latency_ms: Date.now() - started,
        reply_excerpt: value.text.slice(0, EXCERPT),
        usage: plainUsage(value.usage),
        cost: costOf(value.usage, model),
        attempts,
      };
    } catch (error) {
      throw asHttpError(error, model.timeout);
    }
  }
}

function plainUsage(usage: Usage) {
  return { input_tokens: usage.input_tokens, output_tokens: usage.output_tokens };
}

/** Provider messages are already scrubbed of the call's secrets by the adapters. */
function asHttpError(error: unknown, timeout: number): Error {
  if (!(error instanceof ProviderError)) throw error;
  if (error.kind === 'timeout')
    return new GatewayTimeoutError(`the provider did not answer within the model timeout of ${timeout} s`);
  return new BadGatewayError(`connection test failed (${error.kind}): ${error.message}`);
}
