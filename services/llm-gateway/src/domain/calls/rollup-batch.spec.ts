import type { Rollup, RollupDelta } from './calls';
import { RollupBatcher, rollupKey, sumDeltas } from './rollup-batch';

const HOUR = new Date('2026-11-23T10:00:00Z');

const delta = (over: Partial<RollupDelta> = {}): RollupDelta => ({
  kind: 'generation',
  model_id: 1,
  processor_id: null,
  hour: HOUR,
  error: false,
  input_tokens: 10,
  output_tokens: 5,
  unpriced: false,
  cost_units: 1_000n,
  currency: 'USD',
  latency_bucket: 3,
  ...over,
});

/** A writer whose writes finish when the test says so. */
function heldWriter() {
  const writes: { sums: Rollup[]; finish(error?: Error): void }[] = [];
  return {
    writes,
    addAll: (sums: readonly Rollup[]) =>
      new Promise<void>((resolve, reject) =>
        writes.push({ sums: [...sums], finish: (error) => (error ? reject(error) : resolve()) }),
      ),
  };
}

describe('rollup group commit', () => {
  it('writes a call at once when no write is under way', async () => {
    const writer = heldWriter();
    const added = new RollupBatcher(writer).add(delta());
    expect(writer.writes).toHaveLength(1);
    expect(writer.writes[0]!.sums).toEqual([
      expect.objectContaining({ calls: 1, input_tokens: 10, cost_units: 1_000n, latency: new Map([[3, 1]]) }),
    ]);
    writer.writes[0]!.finish();
    await expect(added).resolves.toBeUndefined();
  });

  it('sums the calls that finish during a write into one next write, per model, processor and hour', async () => {
    const writer = heldWriter();
    const batcher = new RollupBatcher(writer);
    const first = batcher.add(delta());
    const later = [
      batcher.add(delta({ error: true, latency_bucket: 4, cost_units: 2_000n })),
      batcher.add(delta({ unpriced: true, input_tokens: 1, output_tokens: 2 })),
      batcher.add(delta({ processor_id: 7 })),
    ];
    expect(writer.writes).toHaveLength(1);
    let laterSettled = false;
    void Promise.all(later).then(() => (laterSettled = true));
    writer.writes[0]!.finish();
    await first;
    await Promise.resolve();
    expect(writer.writes).toHaveLength(2);
    expect(laterSettled).toBe(false);
    expect(writer.writes[1]!.sums).toEqual([
      {
        kind: 'generation',
        model_id: 1,
        processor_id: null,
        hour: HOUR,
        currency: 'USD',
        calls: 2,
        errors: 1,
        input_tokens: 11,
        output_tokens: 7,
        unpriced_calls: 1,
        cost_units: 3_000n,
        fallbacks: 0,
        latency: new Map([
          [4, 1],
          [3, 1],
        ]),
      },
      expect.objectContaining({ processor_id: 7, calls: 1 }),
    ]);
    writer.writes[1]!.finish();
    await Promise.all(later);
  });

  it('keeps kinds and currencies apart: a connection test, or a cost in EUR, is never added to a generation in USD', () => {
    const sums = sumDeltas([
      delta(),
      delta({ kind: 'connection_test', cost_units: 7n }),
      delta({ currency: 'EUR', cost_units: 5n }),
      delta({ cost_units: 2n }),
    ]);
    expect(sums.map((sum) => [sum.kind, sum.currency, sum.calls, sum.cost_units])).toEqual([
      ['generation', 'USD', 2, 1_002n],
      ['connection_test', 'USD', 1, 7n],
      ['generation', 'EUR', 1, 5n],
    ]);
    expect(new Set(sums.map(rollupKey)).size).toBe(3);
  });

  it('fails every call of a failed write, and writes the next calls anew', async () => {
    const writer = heldWriter();
    const batcher = new RollupBatcher(writer);
    const first = batcher.add(delta());
    const second = batcher.add(delta());
    writer.writes[0]!.finish(new Error('database away'));
    await expect(first).rejects.toThrow('database away');
    await Promise.resolve();
    writer.writes[1]!.finish(new Error('still away'));
    await expect(second).rejects.toThrow('still away');
    const third = batcher.add(delta());
    expect(writer.writes).toHaveLength(3);
    expect(writer.writes[2]!.sums[0]!.calls).toBe(1);
    writer.writes[2]!.finish();
    await expect(third).resolves.toBeUndefined();
  });

  describe('with a linger', () => {
    // The linger on the test's clock: how late a loaded machine runs a timer cannot merge or split writes.
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('"ROLLUP_LINGER_MS": a busy gateway writes its rollups once per linger, not once per write', async () => {
      const writer = heldWriter();
      const batcher = new RollupBatcher(writer, 250);
      const added = [batcher.add(delta())];
      await jest.advanceTimersByTimeAsync(250);
      expect(writer.writes).toHaveLength(1);
      // Calls finish every 10 ms while the first write takes 20 ms.
      for (let ms = 0; ms < 240; ms += 10) {
        added.push(batcher.add(delta()));
        if (ms === 20) writer.writes[0]!.finish();
        await jest.advanceTimersByTimeAsync(10);
      }
      expect(writer.writes).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(10);
      expect(writer.writes.map((write) => write.sums[0]!.calls)).toEqual([1, 24]);
      writer.writes[1]!.finish();
      await expect(Promise.all(added)).resolves.toHaveLength(25);
    });
  });
});
