import { LOST_RACE, retryOnConflict } from './conflict';
import { waitFor } from './wait';

describe('retryOnConflict', () => {
  it('decides again after a lost race and returns the first won decision', async () => {
    const outcomes = [LOST_RACE, LOST_RACE, 'written'] as const;
    const seen: number[] = [];
    const value = await retryOnConflict(
      async (attempt) => {
        seen.push(attempt);
        return outcomes[attempt - 1]!;
      },
      { tries: 5, keptChanging: () => new Error('kept changing') },
    );
    expect(value).toBe('written');
    expect(seen).toEqual([1, 2, 3]);
  });

  it('throws keptChanging after `tries` lost races, and decides no more', async () => {
    let calls = 0;
    await expect(
      retryOnConflict(
        async () => {
          calls += 1;
          return LOST_RACE;
        },
        { tries: 3, keptChanging: () => new Error('kept changing') },
      ),
    ).rejects.toThrow('kept changing');
    expect(calls).toBe(3);
  });
});

describe('waitFor', () => {
  it('waits longer after each failure, capped, until the attempt succeeds', async () => {
    const waits: number[] = [];
    const value = await waitFor(
      async (n) => {
        if (n < 5) throw new Error(`down ${n}`);
        return n;
      },
      { baseDelayMs: 100, maxDelayMs: 500, sleep: async (ms) => void waits.push(ms) },
    );
    expect(value).toBe(5);
    expect(waits).toEqual([100, 200, 400, 500]);
  });

  it('gives up with undefined once stopped, without another try', async () => {
    let stopped = false;
    let tries = 0;
    const value = await waitFor(
      async () => {
        tries += 1;
        stopped = tries === 2;
        throw new Error('down');
      },
      { baseDelayMs: 1, maxDelayMs: 1, stopped: () => stopped, sleep: async () => undefined },
    );
    expect(value).toBeUndefined();
    expect(tries).toBe(2);
  });
});
