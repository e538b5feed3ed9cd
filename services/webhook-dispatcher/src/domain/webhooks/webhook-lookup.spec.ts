import type { WebhookRecord } from '../model';
import { WebhookById, WebhookChanges, WebhookLookup, type WebhookLookupOptions } from './webhook-lookup';

const silent = { warn: () => undefined } as never;
const hook = (id: number, version = 1) => ({ _id: id, service_id: 7, version }) as WebhookRecord;

/** A store whose queries the test answers one by one. */
function fakeStore() {
  const pending: { serviceId: number; answer: (webhooks: WebhookRecord[]) => void }[] = [];
  return {
    pending,
    load: (serviceId: number) =>
      new Promise<WebhookRecord[]>((resolve) => pending.push({ serviceId, answer: resolve })),
    answer(webhooks: WebhookRecord[]) {
      pending.shift()!.answer(webhooks);
    },
  };
}

function setup(options: Partial<WebhookLookupOptions> = {}) {
  const store = fakeStore();
  let now = 1_000;
  let listening = true;
  const lookup = new WebhookLookup(store.load, {
    ttlMs: 5000,
    listening: () => listening,
    now: () => now,
    ...options,
  });
  return {
    store,
    lookup,
    advance: (ms: number) => (now += ms),
    setListening: (value: boolean) => (listening = value),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('WebhookLookup (per-replica cache of a Service enabled webhooks, decision 0031)', () => {
  it('answers from memory within the TTL and queries again after it', async () => {
    const { store, lookup, advance } = setup();
    const first = lookup.enabledFor(7);
    store.answer([hook(1)]);
    expect(await first).toEqual([hook(1)]);
    advance(4999);
    expect(await lookup.enabledFor(7)).toEqual([hook(1)]);
    expect(store.pending).toHaveLength(0);
    advance(1);
    const again = lookup.enabledFor(7);
    expect(store.pending).toHaveLength(1);
    store.answer([]);
    expect(await again).toEqual([]);
  });

  it('lets simultaneous misses of one Service share one query', async () => {
    const { store, lookup } = setup();
    const answers = [lookup.enabledFor(7), lookup.enabledFor(7), lookup.enabledFor(7)];
    const other = lookup.enabledFor(8);
    expect(store.pending.map((query) => query.serviceId)).toEqual([7, 8]);
    store.answer([hook(1)]);
    store.answer([]);
    expect(await Promise.all(answers)).toEqual([[hook(1)], [hook(1)], [hook(1)]]);
    expect(await other).toEqual([]);
  });

  it('forgets a Service at once, and does not keep a query that the change overtook', async () => {
    const { store, lookup } = setup();
    const before = lookup.enabledFor(7);
    lookup.forget(7); // the change lands while the query runs: its answer may predate it
    const after = lookup.enabledFor(7); // a new query, not the overtaken one
    expect(store.pending).toHaveLength(2);
    store.answer([]);
    expect(await before).toEqual([]);
    store.answer([hook(1)]);
    expect(await after).toEqual([hook(1)]);
    await tick();
    expect(await lookup.enabledFor(7)).toEqual([hook(1)]); // the fresh answer is kept
    expect(store.pending).toHaveLength(0);

    lookup.forget(7);
    const next = lookup.enabledFor(7);
    expect(store.pending).toHaveLength(1);
    store.answer([]);
    expect(await next).toEqual([]);
  });

  it('clears everything (a broker reconnection), queries under way included', async () => {
    const { store, lookup } = setup();
    const cached = lookup.enabledFor(7);
    store.answer([hook(1)]);
    await cached;
    const running = lookup.enabledFor(8);
    lookup.clear();
    store.answer([hook(2)]);
    await running;
    await tick();
    void lookup.enabledFor(7);
    void lookup.enabledFor(8);
    expect(store.pending.map((query) => query.serviceId)).toEqual([7, 8]);
  });

  it('keeps nothing while it cannot hear the other replicas, or with a TTL of 0', async () => {
    const { store, lookup, setListening } = setup();
    setListening(false);
    const deaf = [lookup.enabledFor(7), lookup.enabledFor(7)];
    expect(store.pending).toHaveLength(2); // no sharing either
    store.answer([hook(1)]);
    store.answer([hook(1)]);
    await Promise.all(deaf);
    setListening(true);
    void lookup.enabledFor(7);
    expect(store.pending).toHaveLength(1);

    const off = setup({ ttlMs: 0 });
    const a = off.lookup.enabledFor(7);
    off.store.answer([]);
    await a;
    void off.lookup.enabledFor(7);
    expect(off.store.pending).toHaveLength(1);
  });

  it('keeps no failed query', async () => {
    let calls = 0;
    const lookup = new WebhookLookup(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('database down');
        return [];
      },
      { ttlMs: 5000, listening: () => true },
    );
    await expect(lookup.enabledFor(7)).rejects.toThrow('database down');
    await tick();
    expect(await lookup.enabledFor(7)).toEqual([]);
    expect(calls).toBe(2);
  });
});

describe('WebhookChanges', () => {
  const change = { service_id: 7, webhook_id: 1, version: 2, deleted: false };

  it('forgets locally before announcing, and a failed announcement neither throws nor un-forgets', async () => {
    const { store, lookup } = setup();
    const first = lookup.enabledFor(7);
    store.answer([hook(1)]);
    await first;
    const byId = new WebhookById(async (id) => hook(id, 2));
    const order: string[] = [];
    const changes = new WebhookChanges(
      lookup,
      byId,
      async () => {
        void lookup.enabledFor(7); // a lookup now already queries
        order.push(`announced with ${store.pending.length} query`);
        throw new Error('broker unavailable');
      },
      silent,
    );
    await expect(changes.changed(change)).resolves.toBeUndefined();
    expect(order).toEqual(['announced with 1 query']);
  });

  it('drops the copy by id when a change of its webhook is heard', async () => {
    let version = 1;
    let reads = 0;
    const byId = new WebhookById(async (id) => {
      reads += 1;
      return hook(id, version);
    });
    const changes = new WebhookChanges(setup().lookup, byId, async () => undefined, silent);
    expect((await byId.get(1, 1))!.version).toBe(1);
    expect((await byId.get(1, 1))!.version).toBe(1);
    expect(reads).toBe(1);
    version = 2;
    changes.heard(change);
    expect((await byId.get(1, 1))!.version).toBe(2);
    expect(reads).toBe(2);
  });
});
