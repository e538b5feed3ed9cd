import { costOf, isUnpriced } from '@pack/llm-providers';
import { inCallSpan } from './call-span';
import type { CallClaim, CallStore, FinishedCall, GenerateRequest, GenerateResult } from './calls';
import { callModel, modelMissing, type CallOutcome } from './generate-call';
import type { EffectiveModel } from './llm-models';
import type { ModelProfiles } from './model-profiles';
import type { RollupBatcher } from './rollup-batch';
import type { CallLabels, ReliableAdapter } from './reliable-adapter';
import { costUnits, hourOf, latencyBucket } from './rollup-math';

export interface GenerationObserver {
  /** One result published for the first time; `overheadMs`: handling time not spent in provider calls. */
  answered(labels: CallLabels, ok: boolean, overheadMs: number): void;
}

export interface GenerationDeps {
  calls: CallStore;
  /** Adds a finished call to the rollups; settles once its share is stored. */
  rollups: Pick<RollupBatcher, 'add'>;
  profiles: ModelProfiles;
  adapterFor(model: EffectiveModel): ReliableAdapter;
  /** Publishes the result and resolves once the broker confirmed it. */
  publish(result: GenerateResult): Promise<void>;
  observer: GenerationObserver;
  /** How long a claim lasts unrenewed; renewed every third of it while the call runs. */
  leaseMs: number;
  /** This replica's name in the claims it takes. */
  owner: string;
  /** An unexpected error turned into an `internal` error result. */
  unexpected(requestId: string, error: unknown): void;
}

/**
 * What became of a request: answered (first time), republished (a repeat of a finished one),
 * held (another replica holds a live lease: try again later), or lost (our lease ran out and
 * another replica took over; it publishes).
 */
export type Handled = 'answered' | 'republished' | 'held' | 'lost';

/**
 * Generation for the pipeline (issue 9 item 4). The provider is called at most once per request
 * id across replicas and redeliveries: the claim is a unique insert keyed by the request id, and
 * a finished record answers repeats from what it stored. At most three database commands per
 * request on the normal path, all group-committed with other requests' under load: the claim
 * insert, the call record insert, the rollup upsert (docs/decisions/0018).
 */
export class Generation {
  constructor(private readonly deps: GenerationDeps) {}

  async handle(request: GenerateRequest): Promise<Handled> {
    const began = performance.now();
    const { calls, owner } = this.deps;
    const model = await this.deps.profiles.get(request.llm_model_id);
    const now = new Date();
    const leaseUntil = new Date(now.getTime() + this.deps.leaseMs);
    const claim: CallClaim = {
      _id: request.request_id,
      state: 'claimed',
      owner,
      lease_until: leaseUntil,
      claimed_at: now,
      model_id: request.llm_model_id,
      processor_id: request.processor_id,
      pipeline_id: request.reply_to?.pipeline_id ?? null,
    };
    let takeovers = 0;
    if (!(await calls.insertClaim(claim))) {
      const existing = await calls.find(request.request_id);
      if (existing?.state === 'finished') {
        await this.deps.publish(existing.result);
        return 'republished';
      }
      if (!existing || existing.state !== 'claimed' || existing.lease_until > now) return 'held';
      if (!(await calls.takeOver(request.request_id, now, owner, leaseUntil))) return 'held';
      // The holder before us stopped renewing (a crash): its call may have reached the provider.
      takeovers = (existing.takeovers ?? 0) + 1;
    }

    const adapter = model ? this.deps.adapterFor(model) : undefined;
    const { outcome, finished } = await inCallSpan(request, model, takeovers, async () => {
      const outcome =
        model && adapter
          ? await this.leased(request.request_id, () => callModel(adapter, model, request))
          : modelMissing(request.llm_model_id);
      if (outcome.cause !== undefined) this.deps.unexpected(request.request_id, outcome.cause);
      const latencyMs = Math.round(performance.now() - began);
      return { outcome, finished: this.finished(request, model, outcome, adapter, latencyMs, takeovers) };
    });
    // The result goes out beside the finish update, not after it: the requester waits only for
    // the publish. The message is acknowledged once both are done, so a crash in between leaves
    // a claimed record whose redelivery waits for the lease, as a crash during the provider call
    // does; a result published twice carries one envelope id and consumers keep the first.
    const [, recorded] = await Promise.all([
      this.deps.publish(finished.result),
      calls.finish(claim, finished),
    ]);
    // Our lease ran out and the replica that took over finished first: it counts the call.
    if (!recorded) return 'lost';
    await this.deps.rollups.add({
      model_id: request.llm_model_id,
      processor_id: request.processor_id,
      hour: hourOf(finished.finished_at),
      error: outcome.error !== null,
      input_tokens: finished.input_tokens,
      output_tokens: finished.output_tokens,
      unpriced: finished.unpriced,
      cost_units: finished.cost === null ? 0n : costUnits(finished.cost),
      latency_bucket: latencyBucket(finished.latency_ms),
    });
    const labels = { provider: model?.provider ?? 'unknown', model_id: request.llm_model_id };
    this.deps.observer.answered(
      labels,
      outcome.error === null,
      performance.now() - began - (adapter?.providerMs ?? 0),
    );
    return 'answered';
  }

  /**
   * Runs the provider call while renewing our claim every third of the lease, so the claim of a
   * live call never runs out and that of a crashed replica runs out within one lease.
   */
  private async leased<T>(requestId: string, work: () => Promise<T>): Promise<T> {
    const { calls, owner, leaseMs } = this.deps;
    const renew = () =>
      void calls
        .renew(requestId, owner, new Date(Date.now() + leaseMs))
        .catch((error: unknown) => this.deps.unexpected(requestId, error));
    const timer = setInterval(renew, Math.max(100, Math.floor(leaseMs / 3)));
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  private finished(
    request: GenerateRequest,
    model: EffectiveModel | null,
    outcome: CallOutcome,
    adapter: ReliableAdapter | undefined,
    latencyMs: number,
    takeovers: number,
  ): FinishedCall {
    const usage = outcome.usage;
    const cost = usage && model ? costOf(usage, model) : null;
    const unpriced = cost !== null && isUnpriced(cost);
    const costText = cost === null || isUnpriced(cost) ? null : cost;
    // A taken-over request counts one attempt per earlier holder: at least once, not exactly once.
    const attempts = (adapter?.attempts ?? 0) + takeovers;
    const result: GenerateResult = {
      request_id: request.request_id,
      llm_model_id: request.llm_model_id,
      processor_id: request.processor_id,
      reply_to: request.reply_to,
      // Echoed: it picks the result's event type (docs/decisions/0036). A request without it
      // (sent before it existed) gets a result without it, as before.
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
      cost: costText,
      unpriced,
      mode: outcome.mode,
      attempts,
      latency_ms: latencyMs,
      error: outcome.error,
    };
    return {
      state: 'finished',
      finished_at: new Date(),
      provider: model?.provider ?? null,
      model_name: model?.model_name ?? null,
      outcome: outcome.error?.kind ?? 'ok',
      input_tokens: usage?.input_tokens ?? 0,
      output_tokens: usage?.output_tokens ?? 0,
      raw_usage_json: usage ? JSON.stringify(usage.raw) : null,
      input_price_per_1m_tokens: model?.input_price_per_1m_tokens ?? null,
      output_price_per_1m_tokens: model?.output_price_per_1m_tokens ?? null,
      cost: costText,
      unpriced,
      latency_ms: latencyMs,
      mode: outcome.mode,
      attempts,
      ...(takeovers > 0 && { takeovers }),
      result,
    };
  }
}
