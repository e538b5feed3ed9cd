import { costOf, isUnpriced, sumCosts, type Cost, type Usage } from '@pack/llm-providers';
import type { FallbackCall, FinishedCall, GenerateRequest, GenerateResult } from '../calls/calls';
import type { ModelTry } from './fallback-chain';
import type { CallOutcome } from './generate-call';
import type { EffectiveModel } from '../models/llm-models';

/** What one model's call is recorded as (spec 2.2): its own model, prices, tokens and cost. */
function callFields(
  model: EffectiveModel | null,
  outcome: CallOutcome,
  attempts: number,
  latencyMs: number,
  currency: string,
) {
  const usage = outcome.usage;
  const cost: Cost | null = usage && model ? costOf(usage, model) : null;
  const unpriced = cost !== null && isUnpriced(cost);
  return {
    cost,
    fields: {
      state: 'finished' as const,
      kind: 'generation' as const,
      finished_at: new Date(),
      provider: model?.provider ?? null,
      model_name: model?.model_name ?? null,
      outcome: outcome.error?.kind ?? 'ok',
      input_tokens: usage?.input_tokens ?? 0,
      output_tokens: usage?.output_tokens ?? 0,
      raw_usage_json: usage ? JSON.stringify(usage.raw) : null,
      input_price_per_1m_tokens: model?.input_price_per_1m_tokens ?? null,
      output_price_per_1m_tokens: model?.output_price_per_1m_tokens ?? null,
      cost: cost === null || isUnpriced(cost) ? null : cost,
      unpriced,
      currency,
      latency_ms: latencyMs,
      mode: outcome.mode,
      attempts,
    },
  };
}

/** The tokens of every call of the chain (one call: its own usage, unchanged). */
function totalUsage(usages: readonly Usage[]): Usage | null {
  if (usages.length <= 1) return usages[0] ?? null;
  const sum = (pick: (usage: Usage) => number | undefined) =>
    usages.some((usage) => pick(usage) !== undefined)
      ? usages.reduce((total, usage) => total + (pick(usage) ?? 0), 0)
      : undefined;
  return {
    input_tokens: sum((usage) => usage.input_tokens)!,
    output_tokens: sum((usage) => usage.output_tokens)!,
    ...(sum((usage) => usage.cached_input_tokens) !== undefined && {
      cached_input_tokens: sum((usage) => usage.cached_input_tokens),
    }),
    ...(sum((usage) => usage.reasoning_tokens) !== undefined && {
      reasoning_tokens: sum((usage) => usage.reasoning_tokens),
    }),
    raw: usages.map((usage) => usage.raw),
  };
}

/**
 * The records of a finished request and its result: the asked model's record (keyed by the
 * request id, holding the result) and one per fallback tried. The result's cost is the exact sum
 * of every priced call (each priced with the prices of the model that made it), `unpriced` when
 * any call that was answered had no prices; `answered_model_id` names the model whose reply is
 * the output, `fallback_from` the asked model when a fallback answered (docs/decisions/0045).
 * `currency`: the Currency setting's code, the currency of every price and cost recorded.
 */
export function finishedCalls(
  request: GenerateRequest,
  asked: EffectiveModel | null,
  tries: readonly ModelTry[],
  outcome: CallOutcome,
  latencyMs: number,
  takeovers: number,
  currency: string,
): { finished: FinishedCall; fallbacks: FallbackCall[] } {
  const answered = outcome.error === null ? (tries.at(-1)?.model.id ?? null) : null;
  const fallbackFrom = answered !== null && answered !== request.llm_model_id ? request.llm_model_id : null;
  const chain = {
    asked_model_id: request.llm_model_id,
    answered_model_id: answered,
  };
  const calls = tries.map((tried) =>
    callFields(tried.model, tried.outcome, tried.adapter.attempts, tried.latencyMs, currency),
  );
  const costs = calls.flatMap((call) => (call.cost === null ? [] : [call.cost]));
  const { total, unpriced_calls } = sumCosts(costs);
  const usage = totalUsage(tries.flatMap((tried) => (tried.outcome.usage ? [tried.outcome.usage] : [])));
  // A taken-over request counts one attempt per earlier holder: at least once, not exactly once.
  const attempts = tries.reduce((sum, tried) => sum + tried.adapter.attempts, 0) + takeovers;
  const result: GenerateResult = {
    request_id: request.request_id,
    llm_model_id: request.llm_model_id,
    processor_id: request.processor_id,
    reply_to: request.reply_to,
    // Echoed: it picks the result's event type (docs/decisions/0036). A request without it
    // (sent before it existed) gets a result without it.
    ...(request.reply_kind !== undefined && { reply_kind: request.reply_kind }),
    ok: outcome.error === null,
    output: outcome.text,
    parsed_json: outcome.parsedJson,
    usage: usage && {
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      ...(usage.cached_input_tokens !== undefined && { cached_input_tokens: usage.cached_input_tokens }),
      ...(usage.reasoning_tokens !== undefined && { reasoning_tokens: usage.reasoning_tokens }),
    },
    cost: costs.length > unpriced_calls ? total : null,
    unpriced: unpriced_calls > 0,
    mode: outcome.mode,
    attempts,
    latency_ms: latencyMs,
    error: errorOf(tries, outcome),
    answered_model_id: answered,
    fallback_from: fallbackFrom,
  };
  const first = calls[0]?.fields ?? callFields(asked, outcome, 0, latencyMs, currency).fields;
  const finished: FinishedCall = {
    ...first,
    // The asked model's own record keeps the request's attempts, takeovers included.
    attempts: (tries[0]?.adapter.attempts ?? 0) + takeovers,
    ...(tries.length <= 1 && { latency_ms: latencyMs }),
    ...(takeovers > 0 && { takeovers }),
    ...chain,
    fallback_from: null,
    ...(tries.length > 1 && { fallbacks: tries.length - 1 }),
    result,
  };
  const fallbacks = tries.slice(1).map((tried, index) => ({
    ...calls[index + 1]!.fields,
    model_id: tried.model.id,
    ...chain,
    fallback_from: request.llm_model_id,
    ...(tried.reason && { fallback_reason: tried.reason }),
  }));
  return { finished, fallbacks };
}

/** The last model's error; after a chain, every model's failure in order (each attempt listed). */
function errorOf(tries: readonly ModelTry[], outcome: CallOutcome): GenerateResult['error'] {
  if (outcome.error === null || tries.length <= 1) return outcome.error;
  return {
    kind: outcome.error.kind,
    message: tries
      .map(
        (tried, index) =>
          `${index === 0 ? 'model' : 'fallback model'} ${tried.model.id}: ${tried.outcome.error?.message ?? 'answered'}`,
      )
      .join('; '),
  };
}
