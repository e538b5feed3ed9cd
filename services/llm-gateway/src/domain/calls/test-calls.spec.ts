import type { EffectiveModel } from '../models/llm-models';
import type { ConnectionTestCall, RollupDelta } from './calls';
import { ConnectionTestCalls } from './test-calls';

const model = {
  id: 7,
  provider: 'vendor1',
  model_name: 'gpt-4o-mini',
  input_price_per_1m_tokens: '0.15',
  output_price_per_1m_tokens: '0.6',
} as EffectiveModel;

const usage = { input_tokens: 1000, output_tokens: 20, raw: { prompt_tokens: 1000, completion_tokens: 20 } };

function recorder(inserted: boolean) {
  const stored: ConnectionTestCall[] = [];
  const deltas: RollupDelta[] = [];
  const calls = new ConnectionTestCalls({
    calls: { recordTest: async (call) => (stored.push(call), inserted) },
    rollups: { add: async (delta) => void deltas.push(...[delta].flat()) },
    currency: () => 'EUR',
  });
  return { calls, stored, deltas };
}

describe('connection tests as calls', () => {
  it('records a passed test with its prices, exact cost and currency, and adds it to the rollups under its kind', async () => {
    const { calls, stored, deltas } = recorder(true);
    const call = await calls.record(model, { usage, error: null, attempts: 1, latencyMs: 120 });
    expect(call).toMatchObject({
      kind: 'connection_test',
      model_id: 7,
      outcome: 'ok',
      input_tokens: 1000,
      output_tokens: 20,
      cost: '0.000162',
      unpriced: false,
      currency: 'EUR',
    });
    expect(call._id).toMatch(/^connection-test:/);
    expect(stored).toEqual([call]);
    expect(deltas).toEqual([
      expect.objectContaining({
        kind: 'connection_test',
        model_id: 7,
        processor_id: null,
        error: false,
        cost_units: 162_000_000n,
        currency: 'EUR',
      }),
    ]);
  });

  it('counts a failed test as an error without tokens, and an unpriced model as unpriced', async () => {
    const { calls, deltas } = recorder(true);
    await calls.record(model, { usage: null, error: 'auth', attempts: 1, latencyMs: 5 });
    await calls.record(
      { ...model, input_price_per_1m_tokens: null, output_price_per_1m_tokens: null },
      { usage, error: null, attempts: 1, latencyMs: 5 },
    );
    expect(deltas).toEqual([
      expect.objectContaining({ error: true, input_tokens: 0, cost_units: 0n, unpriced: false }),
      expect.objectContaining({ error: false, input_tokens: 1000, cost_units: 0n, unpriced: true }),
    ]);
  });

  it('adds nothing to the rollups when the record was stored already (a write retried after its answer was lost)', async () => {
    const { calls, deltas } = recorder(false);
    await calls.record(model, { usage, error: null, attempts: 1, latencyMs: 5 });
    expect(deltas).toEqual([]);
  });
});
