import { TimedCache } from './index';

describe('a timed cache', () => {
  let clock: number;
  let loads: string[];
  let cache: TimedCache<string, string>;
  const load =
    (key: string, fail = false) =>
    async () => {
      loads.push(key);
      if (fail) throw new Error('gone');
      return `${key}@${clock}`;
    };

  beforeEach(() => {
    clock = 0;
    loads = [];
    cache = new TimedCache(1000, () => clock);
  });

  it('shares simultaneous misses and keeps the value for its time to live', async () => {
    const [a, b] = await Promise.all([cache.get('k', load('k')), cache.get('k', load('k'))]);
    clock = 999;
    const c = await cache.get('k', load('k'));
    clock = 1000;
    const d = await cache.get('k', load('k'));
    expect([a, b, c, d, loads]).toEqual(['k@0', 'k@0', 'k@0', 'k@1000', ['k', 'k']]);
  });

  it('forgets one key, the keys a test picks, or all', async () => {
    for (const key of ['a:1', 'a:2', 'b:1']) await cache.get(key, load(key));
    cache.forget('a:1');
    cache.forgetWhere((key) => key.startsWith('a:'));
    await cache.get('b:1', load('b:1'));
    expect(loads).toEqual(['a:1', 'a:2', 'b:1']);
    await cache.get('a:2', load('a:2'));
    cache.clear();
    await cache.get('b:1', load('b:1'));
    expect(loads).toEqual(['a:1', 'a:2', 'b:1', 'a:2', 'b:1']);
  });

  it('does not keep a failed load, and loads every time with a time to live of 0', async () => {
    await expect(cache.get('k', load('k', true))).rejects.toThrow('gone');
    expect(await cache.get('k', load('k'))).toBe('k@0');
    const never = new TimedCache<string, string>(0);
    await never.get('k', load('k'));
    await never.get('k', load('k'));
    expect(loads).toEqual(['k', 'k', 'k', 'k']);
  });
});
