import {
  classifyProviderError,
  generateStructured,
  ProviderError,
  ProviderHttpError,
  ProviderNetworkError,
  schemaProblem,
  StructuredOutputError,
  type ChatMessage,
  type JsonSchema,
  type Usage,
} from '@pack/llm-providers';
import { DEFAULT_MAX_OUTPUT_TOKENS, stringifyExactJson } from '@pack/contracts';
import type { GenerateRequest, GenerateResult } from '../calls/calls';
import type { EffectiveModel } from '../models/llm-models';
import type { ReliableAdapter } from '../providers/reliable-adapter';
import { BreakerOpenError } from '../providers/reliability';

/** What came back from the provider side of one generate request. */
export interface CallOutcome {
  text: string | null;
  /** The valid structured reply as JSON text. */
  parsedJson: string | null;
  /** Every provider call's tokens (a re-ask's included); null when no call was answered. */
  usage: Usage | null;
  mode: GenerateResult['mode'];
  error: { kind: string; message: string } | null;
  /** An unexpected error behind an `internal` outcome, for the log. */
  cause?: unknown;
  /** Why another model may answer instead; absent when no other model would do better. */
  fallbackReason?: FallbackReason;
}

/** Why a call moved to the next model: the labels of `pack_llm_fallbacks_total{reason}`. */
export type FallbackReason = 'breaker_open' | 'rate_limited' | 'server_error' | 'timeout' | 'connection';

/**
 * A failure that says this model cannot answer now, so another may: its breaker is open, it
 * answered 429 or 5xx, did not answer in time, or could not be reached. Not a 4xx (the same body
 * would be refused by any model), not a reply that failed the schema, not an address the URL
 * guard refused (the model's configuration).
 */
export function fallbackReasonOf(error: unknown): FallbackReason | undefined {
  if (error instanceof BreakerOpenError) return 'breaker_open';
  if (error instanceof ProviderHttpError)
    return error.status === 429 ? 'rate_limited' : error.status >= 500 ? 'server_error' : undefined;
  if (error instanceof ProviderError && error.kind === 'timeout') return 'timeout';
  if (error instanceof ProviderNetworkError && error.code !== 'TARGET_REFUSED') return 'connection';
  return undefined;
}

const failure = (kind: string, message: string, extra: Partial<CallOutcome> = {}): CallOutcome => ({
  text: null,
  parsedJson: null,
  usage: null,
  mode: 'none',
  error: { kind, message },
  ...extra,
});

/** The model is gone: an error result, so the requester is told instead of waiting. */
export function modelMissing(modelId: number): CallOutcome {
  return failure('model_not_found', `no LLM model with id ${modelId}`);
}

/** The schema as an object ajv accepts, or the reason it is not one. */
function readSchema(text: string): { schema: JsonSchema } | { problem: string } {
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    return { problem: 'response_schema is not JSON' };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return { problem: 'response_schema must be a JSON object' };
  const problem = schemaProblem(schema as JsonSchema);
  return problem
    ? { problem: `response_schema is not a valid JSON Schema: ${problem}` }
    : { schema: schema as JsonSchema };
}

/**
 * Calls the model for one request: free text, or JSON valid for the request's schema (sent
 * natively or as instructions, one re-ask; the schema is never dropped). Never throws: every
 * failure becomes an error outcome, so a bad request or provider cannot loop in the queue.
 */
export async function callModel(
  adapter: ReliableAdapter,
  model: EffectiveModel,
  request: GenerateRequest,
): Promise<CallOutcome> {
  // A blank system text (a processor without a prompt) says nothing, and some APIs refuse it.
  const messages: ChatMessage[] = [
    ...(model.prompt ? [{ role: 'system' as const, content: model.prompt }] : []),
    ...request.messages.filter((message) => message.role !== 'system' || message.content.trim() !== ''),
  ];
  // The model's output budget, in each protocol's own field (the adapters; spec 2.1 has no field).
  const call = {
    model: model.model_name,
    messages,
    maxOutputTokens: model.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    // The model's setting (spec 2.4 rule 5); a server refusing the native format falls back once.
    schemaAs: model.structured_output,
  };
  try {
    if (request.response_schema === null) {
      const out = await adapter.generate(call);
      return { text: out.text, parsedJson: null, usage: out.usage, mode: 'none', error: null };
    }
    const read = readSchema(request.response_schema);
    if ('problem' in read) return failure('invalid_request', read.problem);
    const out = await generateStructured(adapter, call, read.schema);
    return {
      text: out.text,
      // The model's numbers digit for digit (extractJson reads them exactly; docs/decisions/0039).
      parsedJson: stringifyExactJson(out.data),
      usage: out.usage,
      mode: out.mode === 'native' ? 'native' : 'instructions',
      error: null,
    };
  } catch (error) {
    if (error instanceof StructuredOutputError)
      // The failed attempts were billed: their tokens stay in the outcome.
      return failure('structured_output', error.message, {
        text: error.text,
        usage: error.usage,
        mode: error.mode === 'native' ? 'native' : 'instructions',
      });
    // The result reaches service owners (a pipeline stage's error): what failed and the
    // provider's error code, never the provider's own text, which may quote a secret.
    const fallbackReason = fallbackReasonOf(error);
    const extra = fallbackReason ? { fallbackReason } : {};
    if (error instanceof ProviderError) return failure(error.kind, classifyProviderError(error), extra);
    if (error instanceof BreakerOpenError) return failure('breaker_open', error.message, extra);
    return failure('internal', 'the gateway failed to handle the request', { cause: error });
  }
}
