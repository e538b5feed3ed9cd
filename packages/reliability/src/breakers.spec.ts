import { KeyedBreakers, type BreakerState } from './breakers';

class Ignored extends Error {}

describe('keyed breakers', () => {
  let states: [string, BreakerState][];
  let breakers: KeyedBreakers<string>;
  const fail = () => Promise.reject(new Error('down'));

  beforeEach(() => {
    states = [];
    breakers = new KeyedBreakers<string>({
      errorThresholdPercentage: 50,
      volumeThreshold: 2,
      resetTimeoutMs: 60_000,
      errorFilter: (error) => error instanceof Ignored,
      openError: (key) => new Error(`open: ${key}`),
      onState: (key, state) => states.push([key, state]),
    });
  });
  afterEach(() => breakers.shutdown());

  it('opens one key after repeated failures, leaving the other keys closed', async () => {
    await expect(breakers.run('a', fail)).rejects.toThrow('down');
    await expect(breakers.run('a', fail)).rejects.toThrow('down');
    let called = false;
    const call = async () => {
      called = true;
      return 1;
    };
    await expect(breakers.run('a', call)).rejects.toThrow('open: a');
    expect(called).toBe(false);
    await expect(breakers.run('b', call)).resolves.toBe(1);
    expect([breakers.state('a'), breakers.state('b'), breakers.state('never')]).toEqual([
      'open',
      'closed',
      'closed',
    ]);
    expect(states).toEqual([
      ['a', 'closed'],
      ['a', 'open'],
      ['b', 'closed'],
    ]);
  });

  it('does not count the errors the filter picks', async () => {
    for (let i = 0; i < 4; i += 1)
      await expect(breakers.run('a', () => Promise.reject(new Ignored('bad input')))).rejects.toThrow(
        'bad input',
      );
    expect(breakers.state('a')).toBe('closed');
  });

  it('a probe reaches the target while open, and a closing probe closes the breaker', async () => {
    await expect(breakers.run('a', fail)).rejects.toThrow();
    await expect(breakers.run('a', fail)).rejects.toThrow();
    await expect(breakers.probe('a', async () => 'asked', false)).resolves.toBe('asked');
    expect(breakers.state('a')).toBe('open');
    await expect(breakers.probe('a', async () => 'fixed', true)).resolves.toBe('fixed');
    expect(breakers.state('a')).toBe('closed');
    expect(breakers.resetTimeoutMs).toBe(60_000);
  });

  it('keeps at most maxKeys breakers, evicting the least recently used closed one, never an open one', async () => {
    const bounded = new KeyedBreakers<string>({
      errorThresholdPercentage: 50,
      volumeThreshold: 2,
      resetTimeoutMs: 60_000,
      openError: (key) => new Error(`open: ${key}`),
      maxKeys: 3,
    });
    try {
      const ok = async () => 'ok';
      // 'a' opens; 'b' and 'c' are closed; 'b' is used again, so 'c' is the least recently used.
      await expect(bounded.run('a', fail)).rejects.toThrow('down');
      await expect(bounded.run('a', fail)).rejects.toThrow('down');
      await bounded.run('b', ok);
      await bounded.run('c', ok);
      await bounded.run('b', ok);
      await bounded.run('d', ok);
      expect(bounded.size).toBe(3);
      // 'c' went (a fresh, closed breaker when it comes back); the open 'a' stayed open.
      expect(bounded.state('a')).toBe('open');
      await expect(bounded.run('a', ok)).rejects.toThrow('open: a');
      expect(['b', 'c', 'd'].map((key) => bounded.state(key))).toEqual(['closed', 'closed', 'closed']);
      await bounded.run('c', ok);
      expect(bounded.size).toBe(3);
      // Only open breakers left to keep: the map may grow past the bound rather than forget them.
      for (const key of ['c', 'd', 'e']) {
        await expect(bounded.run(key, fail)).rejects.toThrow('down');
        await expect(bounded.run(key, fail)).rejects.toThrow('down');
      }
      expect(['a', 'c', 'd', 'e'].map((key) => bounded.state(key))).toEqual(['open', 'open', 'open', 'open']);
      expect(bounded.size).toBe(4);
    } finally {
      bounded.shutdown();
    }
  });
});
