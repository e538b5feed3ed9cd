import { TimedCache } from '@pack/cache';
import type { EffectiveModel } from './llm-models';
import type { LlmModelStore } from './store';

/**
 * The models the generation uses, secrets decrypted, kept for `ttlMs` so the hot path reads no
 * profile from the database, at most 10,000 models (@pack/cache's default bound, least recently
 * used dropped first). "No such model" is kept too. A create, change or delete in this
 * replica forgets the entry at once (a create forgets a cached miss); in other replicas it
 * applies within `ttlMs` (docs/decisions/0018).
 */
export class ModelProfiles {
  private readonly cache: TimedCache<number, EffectiveModel | null>;

  constructor(
    private readonly load: (id: number) => Promise<EffectiveModel | null>,
    ttlMs: number,
    now?: () => number,
  ) {
    this.cache = new TimedCache(ttlMs, now);
  }

  /** The model, or null when there is none with this id. */
  get(id: number): Promise<EffectiveModel | null> {
    return this.cache.get(id, () => this.load(id));
  }

  forget(id: number): void {
    this.cache.forget(id);
  }
}

/** `store`, with every create, change or delete of a model also forgetting it in `profiles`. */
export function forgettingStore(store: LlmModelStore, profiles: ModelProfiles): LlmModelStore {
  return {
    nextId: () => store.nextId(),
    async insert(record, event) {
      // A request for this id that came before the model existed left "no such model" cached.
      try {
        return await store.insert(record, event);
      } finally {
        profiles.forget(record._id);
      }
    },
    find: (id) => store.find(id),
    list: (limit, start) => store.list(limit, start),
    fallbackOf: (id, limit) => store.fallbackOf(id, limit),
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
