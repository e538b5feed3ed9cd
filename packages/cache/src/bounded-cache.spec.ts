import { BoundedCache } from './bounded-cache';

describe('a bounded cache', () => {
  let clock: number;
  beforeEach(() => {
    clock = 0;
  });

  it('serves an entry until exactly its time to live, counted from when it was stored', () => {
    const cache = new BoundedCache<string, string>({ maxEntries: 10, ttlMs: 1000, now: () => clock });
    cache.set('a', 'A');
    cache.set('b', 'B', { at: -500 });
    clock = 499;
    expect([cache.get('a'), cache.get('b')]).toEqual(['A', 'B']);
    clock = 500;
    expect([cache.get('a'), cache.get('b')]).toEqual(['A', undefined]);
    clock = 999;
    expect(cache.get('a')).toBe('A');
    clock = 1000;
    expect([cache.get('a'), cache.size]).toEqual([undefined, 0]);
  });

  it('gives an entry a shorter life of its own or an expiry', () => {
    const cache = new BoundedCache<string, string | null>({ maxEntries: 10, ttlMs: 1000, now: () => clock });
    cache.set('miss', null, { ttlMs: 100 });
    cache.set('token', 'T', { expiresAt: 300 });
    clock = 99;
    expect([cache.get('miss'), cache.get('token')]).toEqual([null, 'T']);
    clock = 100;
    expect([cache.get('miss'), cache.get('token')]).toEqual([undefined, 'T']);
    clock = 300;
    expect(cache.get('token')).toBeUndefined();
  });

  it('holds at most its entries, dropping the least recently used', () => {
    const cache = new BoundedCache<number, string>({ maxEntries: 3, ttlMs: Infinity });
    for (const key of [1, 2, 3]) cache.set(key, `v${key}`);
    cache.get(1);
    cache.set(4, 'v4');
    expect([1, 2, 3, 4].map((key) => cache.get(key) ?? null)).toEqual(['v1', null, 'v3', 'v4']);
    expect(cache.size).toBe(3);
  });

  it('holds at most its size budget, and keeps no entry larger than all of it', () => {
    const cache = new BoundedCache<number, string>({
      maxEntries: 100,
      ttlMs: Infinity,
      maxSize: 10,
      sizeOf: (value) => value.length,
    });
    cache.set(1, 'aaaa');
    cache.set(2, 'bbbb');
    cache.set(3, 'cccc');
    expect([cache.get(1) ?? null, cache.get(2), cache.get(3), cache.heldSize]).toEqual([
      null,
      'bbbb',
      'cccc',
      8,
    ]);
    cache.set(4, 'x'.repeat(11));
    expect([cache.get(4) ?? null, cache.heldSize]).toEqual([null, 8]);
  });

  it('forgets one key, the keys a test picks, or all', () => {
    const cache = new BoundedCache<string, number>({ maxEntries: 10, ttlMs: Infinity });
    for (const [i, key] of ['a:1', 'a:2', 'b:1', 'b:2'].entries()) cache.set(key, i);
    cache.delete('b:2');
    cache.deleteWhere((key) => key.startsWith('a:'));
    expect(['a:1', 'a:2', 'b:1', 'b:2'].map((key) => cache.get(key) ?? null)).toEqual([null, null, 2, null]);
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
