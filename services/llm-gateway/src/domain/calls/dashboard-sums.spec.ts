import type { Rollup } from './calls';
import { Sums, type CostView } from './dashboard-sums';

const rollup = (over: Partial<Rollup> = {}): Rollup => ({
  kind: 'generation',
  model_id: 1,
  processor_id: null,
  hour: new Date('2026-11-23T10:00:00Z'),
  calls: 1,
  errors: 0,
  input_tokens: 10,
  output_tokens: 5,
  unpriced_calls: 0,
  cost_units: 1_500_000n,
  currency: 'USD',
  fallbacks: 0,
  latency: new Map([[3, 1]]),
  ...over,
});

const shown: CostView = { show: true, current: 'USD', named: (code) => code };

describe('dashboard sums per currency', () => {
  it('names the currency of a cost made in one currency', () => {
    const sums = new Sums();
    sums.add(rollup(), 'USD');
    sums.add(rollup({ cost_units: 2n }), 'USD');
    expect(sums.stats(shown)).toMatchObject({
      calls: 2,
      cost: '0.000001500002',
      currency: 'USD',
      costs: [{ currency: 'USD', cost: '0.000001500002' }],
    });
  });

  it('never adds amounts in different currencies: one sum each, by code, and no single cost', () => {
    const sums = new Sums();
    sums.add(rollup({ cost_units: 3n }), 'USD');
    sums.add(rollup({ cost_units: 1_000_000_000_000n }), 'EUR');
    expect(sums.stats(shown)).toMatchObject({
      calls: 2,
      input_tokens: 20,
      cost: null,
      currency: null,
      costs: [
        { currency: 'EUR', cost: '1' },
        { currency: 'USD', cost: '0.000000000003' },
      ],
    });
  });

  it('without calls: zero in the current currency', () => {
    expect(new Sums().stats({ ...shown, current: 'GBP' })).toMatchObject({
      calls: 0,
      cost: '0',
      currency: 'GBP',
      costs: [{ currency: 'GBP', cost: '0' }],
    });
  });

  it('hidden costs: no cost, no currency, no sums', () => {
    const sums = new Sums();
    sums.add(rollup(), 'USD');
    expect(sums.stats({ ...shown, show: false })).toMatchObject({
      cost: null,
      currency: null,
      costs: [],
      cost_covers: null,
    });
  });

  it('with the Currency group disabled: amounts still kept apart, no currency named', () => {
    const sums = new Sums();
    sums.add(rollup({ cost_units: 1n }), 'USD');
    sums.add(rollup({ cost_units: 2n }), 'EUR');
    expect(sums.stats({ ...shown, named: () => null }).costs).toEqual([
      { currency: null, cost: '0.000000000002' },
      { currency: null, cost: '0.000000000001' },
    ]);
  });
});
