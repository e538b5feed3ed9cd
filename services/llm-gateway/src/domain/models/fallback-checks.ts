import { ValidationError } from '@pack/errors';
import type { LlmModelRecord } from './model';

/** Models a cycle check reads at most: every chain is short (3 fallbacks each), this bounds a bad graph. */
const MAX_MODELS_READ = 100;

const refused = (message: string) =>
  new ValidationError('invalid fallback_models', { errors: { fallback_models: [message] } });

/**
 * The fallbacks `fallbacks` of model `id` are allowed (docs/decisions/0045): not
 * the model itself, each an existing model, and no cycle through the fallbacks' own lists
 * (A->B->A, A->B->C->A). Duplicates and the count are the schema's. A 400 naming
 * `fallback_models` otherwise. The generation never follows a fallback's own list, so a cycle
 * that two concurrent edits could still create cannot make a call loop (it visits each model once).
 */
export async function checkFallbacks(
  find: (id: number) => Promise<Pick<LlmModelRecord, 'fallback_models'> | null>,
  id: number,
  fallbacks: readonly number[],
): Promise<void> {
  if (fallbacks.includes(id)) throw refused(`must not name the model itself (${id})`);
  const found = await Promise.all(fallbacks.map((fallback) => find(fallback)));
  const missing = fallbacks.filter((_, index) => found[index] === null);
  if (missing.length > 0) throw refused(`no LLM model with id ${missing.join(', ')}`);
  // Walk the fallbacks' own lists breadth first; reaching `id` again is a cycle.
  const via = new Map<number, number>(fallbacks.map((fallback) => [fallback, id]));
  let frontier = fallbacks.map((fallback, index) => ({ id: fallback, record: found[index]! }));
  let read = fallbacks.length;
  while (frontier.length > 0) {
    const next: number[] = [];
    for (const { id: from, record } of frontier)
      for (const to of record.fallback_models ?? []) {
        if (to === id) throw refused(`would make a cycle: ${path(via, from, id).join(' -> ')} -> ${id}`);
        if (via.has(to)) continue;
        via.set(to, from);
        next.push(to);
      }
    read += next.length;
    if (read > MAX_MODELS_READ) throw refused('the fallbacks of these models are too many to check');
    const records = await Promise.all(next.map((model) => find(model)));
    frontier = next.flatMap((model, index) =>
      records[index] ? [{ id: model, record: records[index] }] : [],
    );
  }
}

/** The chain from `start` to `node` through `via` (each model's predecessor). */
function path(via: ReadonlyMap<number, number>, node: number, start: number): number[] {
  const chain = [node];
  for (let at = node; at !== start;) {
    at = via.get(at)!;
    chain.unshift(at);
  }
  return chain;
}
