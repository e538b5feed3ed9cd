import type { Rollup, RollupDelta } from './calls';
import type { RollupStore } from './store';
import { GroupCommit } from '@pack/reliability';

/**
 * The calls' deltas summed per kind, model, processor, currency and hour, in the order each key
 * first appears: costs in different currencies are never added together.
 */
export function sumDeltas(deltas: readonly RollupDelta[]): Rollup[] {
  const sums = new Map<string, Rollup>();
  for (const delta of deltas) {
    const key = rollupKey(delta);
    let sum = sums.get(key);
    if (!sum) {
      sum = {
        kind: delta.kind,
        model_id: delta.model_id,
        processor_id: delta.processor_id,
        hour: delta.hour,
        calls: 0,
        errors: 0,
        input_tokens: 0,
        output_tokens: 0,
        unpriced_calls: 0,
        cost_units: 0n,
        currency: delta.currency,
        fallbacks: 0,
        latency: new Map(),
      };
      sums.set(key, sum);
    }
    sum.calls += 1;
    sum.errors += delta.error ? 1 : 0;
    sum.input_tokens += delta.input_tokens;
    sum.output_tokens += delta.output_tokens;
    sum.unpriced_calls += delta.unpriced ? 1 : 0;
    sum.cost_units += delta.cost_units;
    sum.fallbacks += delta.fallback ? 1 : 0;
    sum.latency.set(delta.latency_bucket, (sum.latency.get(delta.latency_bucket) ?? 0) + 1);
  }
  return [...sums.values()];
}

/** What one rollup document sums, as text: also the document's `_id` after its period. */
export function rollupKey(
  of: Pick<Rollup, 'kind' | 'model_id' | 'processor_id' | 'currency' | 'hour'>,
): string {
  return `${of.kind}:${of.model_id}:${of.processor_id ?? '-'}:${of.currency ?? '-'}:${of.hour.toISOString()}`;
}

/**
 * Group commit of the rollups (docs/decisions/0018). Every call adds to the same few documents
 * (its model's hour and day), and updates of one document run one at a time, so one write per
 * call made those documents the gateway's bottleneck. Calls that finish while a write is under
 * way are summed and written together by the next one, one command for all of them; an idle
 * gateway's first call waits `lingerMs` for others (0052, 0063). A call's promise settles when
 * the write holding it did. Generation does not wait for it (0063): a crash loses the calls
 * finished but not yet rolled up, a failed write all of its calls; their records stay exact, and
 * a redelivered request finds its record finished and only republishes, so nothing is counted
 * twice. Connection tests wait for it: their answer follows their share.
 */
export class RollupBatcher {
  private readonly commits;

  /** `lingerMs`: how long an idle batcher's first delta waits for others (0052); 0 writes at once. */
  constructor(store: Pick<RollupStore, 'addAll'>, lingerMs = 0) {
    this.commits = new GroupCommit<readonly RollupDelta[], void>(
      async (groups) => {
        await store.addAll(sumDeltas(groups.flat()));
        return groups.map(() => undefined);
      },
      // Paced: the calls that finish during a write wait out their own linger too, so a busy
      // gateway writes its rollups once per `lingerMs`, not back to back.
      { maxItems: 1000, lingerMs, paced: true },
    );
  }

  /** Writes the deltas that wait, without the rest of their linger (a stopping replica). */
  flush(): Promise<void> {
    return this.commits.flush();
  }

  /** One call's delta, or a request's calls (the asked model's and its fallbacks') in one write. */
  add(delta: RollupDelta | readonly RollupDelta[]): Promise<void> {
    return this.commits.run(Array.isArray(delta) ? delta : [delta as RollupDelta]);
  }
}
