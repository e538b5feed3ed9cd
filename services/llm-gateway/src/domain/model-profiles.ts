import type { EffectiveModel } from './llm-models';
import type { LlmModelStore } from './model';

interface Entry {
  model: Promise<EffectiveModel | null>;
  expires: number;
}

/**
 * The models the generation uses, secrets decrypted, kept for `ttlMs` so the hot path reads no
 * profile from the database. A change or delete in this replica forgets the entry at once; in
 * other replicas it applies within `ttlMs` (docs/decisions/0018).
 */
export class ModelProfiles {
  private readonly entries = new Map<number, Entry>();

  constructor(
    private readonly load: (id: number) => Promise<EffectiveModel | null>,
    private readonly ttlMs: number,
  ) {}

  /** The model, or null when there is none with this id. */
  get(id: number): Promise<EffectiveModel | null> {
    const now = Date.now();
    const hit = this.entries.get(id);
    if (hit && hit.expires > now) return hit.model;
    // Concurrent misses share one load; a failed load is not kept.
    const model = this.load(id);
    this.entries.set(id, { model, expires: now + this.ttlMs });
    model.catch(() => this.entries.delete(id));
    return model;
  }

  forget(id: number): void {
    this.entries.delete(id);
  }
}

/** `store`, with every change or delete of a model also forgetting it in `profiles`. */
export function forgettingStore(store: LlmModelStore, profiles: ModelProfiles): LlmModelStore {
  return {
    nextId: () => store.nextId(),
    insert: (record, event) => store.insert(record, event),
    find: (id) => store.find(id),
    list: (limit, offset) => store.list(limit, offset),
    async update(id, version, set, event) {
      profiles.forget(id);
      try {
        return await store.update(id, version, set, event);
      } finally {
        profiles.forget(id);
      }
    },
    async remove(id, version, event) {
      try {
        return await store.remove(id, version, event);
      } finally {
        profiles.forget(id);
      }
    },
  };
}
