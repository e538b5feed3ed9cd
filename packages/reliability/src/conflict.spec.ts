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

  it('counts a thrown error that lostRace picks as a lost race, and throws any other at once', async () => {
    const duplicate = new Error('E11000 duplicate key');
    let calls = 0;
    const value = await retryOnConflict(
      async () => {
        calls += 1;
        if (calls < 3) throw duplicate;
        return 'inserted';
      },
      { tries: 3, lostRace: (error) => error === duplicate, keptChanging: () => new Error('kept changing') },
    );
    expect(value).toBe('inserted');
    await expect(
      retryOnConflict(
        async () => {
          throw new Error('disk full');
        },
        {
          tries: 3,
          lostRace: (error) => error === duplicate,
          keptChanging: () => new Error('kept changing'),
        },
      ),
    ).rejects.toThrow('disk full');
    const last = retryOnConflict(
      async () => {
        throw duplicate;
      },
      { tries: 2, lostRace: (error) => error === duplicate, keptChanging: (error) => error as Error },
    );
    await expect(last).rejects.toBe(duplicate);
  });

  it('pauses between decisions when asked, not before the first', async () => {
    const pauses: number[] = [];
    await expect(
      retryOnConflict(async () => LOST_RACE, {
        tries: 4,
        pauseMs: (attempt) => attempt * 10,
        sleep: async (ms) => void pauses.push(ms),
        keptChanging: () => new Error('kept changing'),
      }),
    ).rejects.toThrow('kept changing');
    expect(pauses).toEqual([10, 20, 30]);
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

  it('throws an error retryIf refuses at once, and the last error once maxMs has passed', async () => {
    let tries = 0;
    await expect(
      waitFor(
        async () => {
          tries += 1;
          throw new Error(tries === 1 ? 'away' : 'refused');
        },
        {
          baseDelayMs: 1,
          maxDelayMs: 1,
          retryIf: (error) => (error as Error).message === 'away',
          sleep: async () => undefined,
        },
      ),
    ).rejects.toThrow('refused');
    expect(tries).toBe(2);

    let clock = 0;
    const waits: number[] = [];
    await expect(
      waitFor(
        async (n) => {
          throw new Error(`away ${n}`);
        },
        {
          baseDelayMs: 100,
          maxDelayMs: 100,
          maxMs: 250,
          now: () => clock,
          sleep: async (ms) => {
            waits.push(ms);
            clock += ms;
          },
        },
      ),
    ).rejects.toThrow('away 4');
    expect(waits).toEqual([100, 100, 100]);
  });

  it('randomises each wait by the jitter asked for', async () => {
    const waits: number[] = [];
    await waitFor(
      async (n) => {
        if (n < 3) throw new Error('down');
        return n;
      },
      {
        baseDelayMs: 100,
        maxDelayMs: 1000,
        jitter: 'equal',
        random: () => 0,
        sleep: async (ms) => void waits.push(ms),
      },
    );
    expect(waits).toEqual([50, 100]);
  });

  it('waits the first step before the first try when asked (reconnecting right after a loss)', async () => {
    const log: string[] = [];
    await waitFor(
      async (n) => {
        log.push(`try ${n}`);
        if (n < 2) throw new Error('down');
      },
      {
        baseDelayMs: 100,
        maxDelayMs: 1000,
        delayFirst: true,
        sleep: async (ms) => void log.push(`wait ${ms}`),
      },
    );
    expect(log).toEqual(['wait 100', 'try 1', 'wait 200', 'try 2']);
  });
});
