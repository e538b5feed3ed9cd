import { inCallSpan } from './call-span';
import type { CallClaim, FallbackCall, GenerateRequest, GenerateResult } from '../calls/calls';
import type { CallStore } from '../calls/store';
import { callChain, type ChainDeps } from './fallback-chain';
import { finishedCalls } from './finished-calls';
import { modelMissing, type FallbackReason } from './generate-call';
import type { EffectiveModel } from '../models/llm-models';
import type { ModelProfiles } from '../models/model-profiles';
import type { RollupBatcher } from '../calls/rollup-batch';
import type { CallLabels, ReliableAdapter } from '../providers/reliable-adapter';
import { callMeasures } from '../calls/rollup-math';

export interface GenerationObserver {
  /** One result published for the first time; `overheadMs`: handling time not spent in provider calls. */
  answered(labels: CallLabels, ok: boolean, overheadMs: number): void;
  /** A call moved from one model to the next of the asked model's fallbacks. */
  fellBack(from: CallLabels, to: CallLabels, reason: FallbackReason): void;
}

export interface GenerationDeps {
  calls: CallStore;
  /** Adds a request's finished calls to the rollups; settles once their share is stored. */
  rollups: Pick<RollupBatcher, 'add'>;
  /** A rollup write failed: its calls are in the records and missing from the rollups. */
  rollupLost(requestId: string, error: unknown): void;
  profiles: ModelProfiles;
  adapterFor(model: EffectiveModel): ReliableAdapter;
  /** Publishes the result and resolves once the broker confirmed it. */
  publish(result: GenerateResult): Promise<void>;
  observer: GenerationObserver;
  /** The Currency setting's code now: the currency the calls' prices and costs are in. */
  currency(): string;
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
 * Generation for the pipeline. The provider is called at most once per request
 * id across replicas and redeliveries: the claim is a unique insert keyed by the request id, and
 * a finished record answers repeats from what it stored. At most three database commands per
 * request on the normal path, all group-committed with other requests' under load: the claim
 * insert, the call record insert (before the result is published), the rollup upsert (after it,
 * shared by the calls of up to ROLLUP_LINGER_MS) (docs/decisions/0018, 0063).
 */
export class Generation {
  /**
   * Request ids this replica is working on. A copy of one (an outbox event republished after
   * the database came back) is held here, never taken over: our lease may have run out only
   * because the database was away and renewals failed, while our call was made and its record
   * waits for the database (docs/decisions/0051).
   */
  private readonly working = new Set<string>();

  private readonly chain: ChainDeps;

  constructor(private readonly deps: GenerationDeps) {
    const labels = (model: EffectiveModel) => ({ provider: model.provider, model_id: model.id });
    this.chain = {
      load: (id) => deps.profiles.get(id),
      adapterFor: (model) => deps.adapterFor(model),
      fellBack: (from, to, reason) => deps.observer.fellBack(labels(from), labels(to), reason),
    };
  }

  async handle(request: GenerateRequest): Promise<Handled> {
    if (this.working.has(request.request_id)) return 'held';
    this.working.add(request.request_id);
    try {
      return await this.claimAndCall(request);
    } finally {
      this.working.delete(request.request_id);
    }
  }

  private async claimAndCall(request: GenerateRequest): Promise<Handled> {
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
    if (!(await this.stillOurs(request.request_id, now))) return 'held';

    const currency = this.deps.currency();
    const { tries, outcome, finished, fallbacks } = await inCallSpan(request, model, takeovers, async () => {
      const tries = model
        ? await this.leased(request.request_id, () => callChain(this.chain, model, request))
        : [];
      const last = tries.at(-1);
      const outcome = last ? last.outcome : modelMissing(request.llm_model_id);
      for (const tried of tries)
        if (tried.outcome.cause !== undefined) this.deps.unexpected(request.request_id, tried.outcome.cause);
      const latencyMs = Math.round(performance.now() - began);
      return {
        tries,
        outcome,
        ...finishedCalls(request, model, tries, outcome, latencyMs, takeovers, currency),
      };
    });
    // The record is stored before the result goes out: whatever the requester acts on is in the
    // call records, and a crash after the insert leaves a finished record whose redelivery only
    // republishes it, never calls the provider again. The insert is group-committed with other
    // requests' finishes, so under load it costs a fraction of a command.
    const recorded = await calls.finish(claim, finished, fallbacks);
    // Our lease ran out and the replica that took over finished first: it publishes and counts.
    if (!recorded) return 'lost';
    await this.deps.publish(finished.result);
    // The rollup behind the answer: the request is acknowledged once its result is published,
    // while its share waits (ROLLUP_LINGER_MS) to go with other calls' in one update. Holding the
    // acknowledgement for it would save nothing: a redelivered request finds its record finished
    // and only republishes, so a crash or a failed write before the rollup is stored leaves the
    // call in the records and out of the rollups either way (docs/decisions/0063).
    this.deps.rollups
      .add(
        // One delta per model tried, each to its own model's rollup (one group-committed write).
        [finished, ...fallbacks].map((call, index) => ({
          kind: 'generation' as const,
          model_id: index === 0 ? request.llm_model_id : (call as FallbackCall).model_id,
          processor_id: request.processor_id,
          ...callMeasures(call),
          currency,
          ...(index > 0 && { fallback: true }),
        })),
      )
      .catch((error: unknown) => this.deps.rollupLost(request.request_id, error));
    const labels = { provider: model?.provider ?? 'unknown', model_id: request.llm_model_id };
    const providerMs = tries.reduce((sum, tried) => sum + tried.adapter.providerMs, 0);
    this.deps.observer.answered(labels, outcome.error === null, performance.now() - began - providerMs);
    return 'answered';
  }

  /**
   * Whether a claim taken at `claimedAt` is still ours. Its answer may come after the lease ran
   * out (the database's reply held up by a partition), and another replica may have taken the
   * request over and called the provider meanwhile: a claim older than a renewal period is
   * renewed first, which fails once another replica owns it or finished it.
   */
  private async stillOurs(requestId: string, claimedAt: Date): Promise<boolean> {
    const { calls, owner, leaseMs } = this.deps;
    if (Date.now() - claimedAt.getTime() < leaseMs / 3) return true;
    return calls.renew(requestId, owner, new Date(Date.now() + leaseMs));
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
}
