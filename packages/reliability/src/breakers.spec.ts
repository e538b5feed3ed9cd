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
});
