import { TimedCache } from './timed-cache';

describe('a loading cache, bounded', () => {
  it('keeps at most its entries: the least recently used key is loaded again', async () => {
    const loads: string[] = [];
    const cache = new TimedCache<string, string>(60_000, () => 0, 2);
    const load = (key: string) => async () => (loads.push(key), key);
    for (const key of ['a', 'b', 'a', 'c', 'a', 'b']) await cache.get(key, load(key));
    expect(loads).toEqual(['a', 'b', 'c', 'b']);
  });

  it('does not keep a load that a forget overtook', async () => {
    const loads: string[] = [];
    let finish: (value: string) => void = () => {};
    const cache = new TimedCache<string, string>(60_000, () => 0);
    const slow = cache.get(
      'k',
      () => (loads.push('slow'), new Promise<string>((resolve) => (finish = resolve))),
    );
    cache.forget('k');
    finish('old');
    expect(await slow).toBe('old');
    expect(await cache.get('k', async () => (loads.push('fresh'), 'new'))).toBe('new');
    expect(loads).toEqual(['slow', 'fresh']);
  });
});
