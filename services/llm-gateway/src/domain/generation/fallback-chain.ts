import type { GenerateRequest } from '../calls/calls';
import { callModel, type CallOutcome, type FallbackReason } from './generate-call';
import type { EffectiveModel } from '../models/llm-models';
import type { ReliableAdapter } from '../providers/reliable-adapter';

/** One model's part of a request: its own adapter (retries, breaker), outcome and time. */
export interface ModelTry {
  model: EffectiveModel;
  adapter: ReliableAdapter;
  outcome: CallOutcome;
  latencyMs: number;
  /** Why the call came to this model (a fallback); absent for the model asked. */
  reason?: FallbackReason;
}

export interface ChainDeps {
  /** The model with this id as generation uses it, or null when there is none (deleted since). */
  load(id: number): Promise<EffectiveModel | null>;
  adapterFor(model: EffectiveModel): ReliableAdapter;
  /** A call moved from model `from` to model `to`. */
  fellBack(from: EffectiveModel, to: EffectiveModel, reason: FallbackReason): void;
}

/**
 * Calls the asked model, then, while a model cannot answer (`fallbackReason`: breaker open, 429,
 * 5xx, timeout, connection failure), the next of the asked model's `fallback_models` in order,
 * each through its own adapter: its own retries and breaker
 * (docs/decisions/0045). Only the asked model's list is followed, never a fallback's own, and a
 * model is called at most once per request, so a chain cannot loop; a fallback deleted since is
 * skipped. Every model tried is returned, in order: the last one's outcome is the request's.
 */
export async function callChain(
  deps: ChainDeps,
  asked: EffectiveModel,
  request: GenerateRequest,
): Promise<ModelTry[]> {
  const tries: ModelTry[] = [];
  const visited = new Set([asked.id]);
  const pending = [...(asked.fallback_models ?? [])];
  let model: EffectiveModel | null = asked;
  let reason: FallbackReason | undefined;
  while (model) {
    const adapter = deps.adapterFor(model);
    const began = performance.now();
    const outcome = await callModel(adapter, model, request);
    tries.push({
      model,
      adapter,
      outcome,
      latencyMs: Math.round(performance.now() - began),
      ...(reason && { reason }),
    });
    reason = outcome.fallbackReason;
    if (!reason) break;
    const from: EffectiveModel = model;
    model = null;
    while (!model && pending.length > 0) {
      const id = pending.shift()!;
      if (visited.has(id)) continue;
      visited.add(id);
      model = await deps.load(id);
    }
    if (model) deps.fellBack(from, model, reason);
  }
  return tries;
}
