import { createEnvelope, events } from '@pack/contracts';
import type { EffectiveModel } from './llm-models';
import type { LlmModelRecord } from './model';
import type { LlmModelStore } from './store';
import { forgettingStore, ModelProfiles } from './model-profiles';

const TTL_MS = 5000;

/** One database seen by two replicas, each with its own profile cache and clock. */
function twoReplicas() {
  const stored = new Map<number, LlmModelRecord>();
  let clock = 0;
  const load = async (id: number) => (stored.get(id) as unknown as EffectiveModel | undefined) ?? null;
  const replica = () => new ModelProfiles(load, TTL_MS, () => clock);
  const store: LlmModelStore = {
    nextId: async () => stored.size + 1,
    insert: async (record) => void stored.set(record._id, record),
    find: async (id) => stored.get(id) ?? null,
    list: async () => ({ count: stored.size, items: [...stored.values()] }),
    fallbackOf: async () => [],
    update: async () => 'gone',
    remove: async () => 'gone',
  };
  return { replica, store, tick: (ms: number) => (clock += ms) };
}

const record = (id: number): LlmModelRecord => ({
  _id: id,
  name: `model ${id}`,
  provider: 'vendor1',
  model_name: 'gpt-4o-mini',
  prompt: '',
  timeout: 60,
  input_price_per_1m_tokens: null,
  output_price_per_1m_tokens: null,
  extra_data: {},
  version: 1,
  created_at: new Date(0),
  updated_at: new Date(0),
});

const event = createEnvelope(
  events.llmModelChanged,
  {
    llm_model_id: 7,
    name: 'model 7',
    provider: 'vendor1',
    model_name: 'm',
    timeout: 60,
    deleted: false,
    version: 1,
  },
  { source: 'test', correlationId: 'test' },
);

describe('the model profile cache (caches forget on every write, misses included)', () => {
  it('a create after a cached miss is seen at once on the writing replica', async () => {
    const { replica, store } = twoReplicas();
    const writer = replica();
    expect(await writer.get(7)).toBeNull();
    await forgettingStore(store, writer).insert(record(7), event);
    expect(await writer.get(7)).toMatchObject({ _id: 7, name: 'model 7' });
  });

  it('and on another replica within LLM_MODEL_CACHE_MS', async () => {
    const { replica, store, tick } = twoReplicas();
    const [writer, other] = [replica(), replica()];
    expect(await other.get(7)).toBeNull();
    await forgettingStore(store, writer).insert(record(7), event);
    tick(TTL_MS - 1);
    expect(await other.get(7)).toBeNull();
    tick(1);
    expect(await other.get(7)).toMatchObject({ _id: 7 });
  });
});
