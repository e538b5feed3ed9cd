import { retry } from './retry';

class Flaky extends Error {
  constructor(readonly retryAfter?: number) {
    super('flaky');
  }
}

describe('retry', () => {
  const policy = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 };
  let waits: number[];
  const options = {
    policy,
    jitter: 'equal' as const,
    retryable: (error: unknown) => error instanceof Flaky,
    retryAfterOf: (error: unknown) => (error as Flaky).retryAfter,
    sleep: async (ms: number) => void waits.push(ms),
    random: () => 1,
  };
  beforeEach(() => {
    waits = [];
  });

  it('returns the first success and how many attempts it took', async () => {
    let calls = 0;
    const result = await retry(async (n) => {
      calls += 1;
      if (n < 3) throw new Flaky();
      return 'ok';
    }, options);
    expect(result).toEqual({ value: 'ok', attempts: 3 });
    expect([calls, waits]).toEqual([3, [100, 200]]);
  });

  it('gives up after the bounded number of attempts with the last error', async () => {
    let calls = 0;
    const failing = async () => {
      calls += 1;
      throw new Flaky(0.25);
    };
    await expect(retry(failing, options)).rejects.toThrow('flaky');
    expect([calls, waits]).toEqual([3, [250, 250]]);
  });

  it('throws an error that will not pass on a second try at once', async () => {
    let calls = 0;
    const broken = async () => {
      calls += 1;
      throw new Error('bad request');
    };
    await expect(retry(broken, options)).rejects.toThrow('bad request');
    expect([calls, waits]).toEqual([1, []]);
  });

  it('tells each retry and its delay', async () => {
    const told: number[] = [];
    await expect(
      retry(
        async () => {
          throw new Flaky();
        },
        { ...options, onRetry: (_error, delay) => told.push(delay) },
      ),
    ).rejects.toThrow();
    expect(told).toEqual([100, 200]);
  });
});
