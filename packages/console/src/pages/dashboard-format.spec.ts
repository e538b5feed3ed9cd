import { axisLabel, formatCosts } from './dashboard-format';

describe('chart axis labels', () => {
  it('writes small costs as plain decimals and large counts with separators', () => {
    expect([0, 0.000012, 0.0000012345678, 0.5, 2, 1500].map(axisLabel)).toEqual([
      '0',
      '0.000012',
      '0.000001235',
      '0.5',
      '2',
      '1,500',
    ]);
  });
});

describe('cost figures', () => {
  it('name the currency of each sum and never add sums in different currencies', () => {
    expect(formatCosts([{ currency: 'USD', cost: '0.000012' }])).toBe('0.000012 USD');
    expect(
      formatCosts([
        { currency: 'EUR', cost: '0.5' },
        { currency: 'GBP', cost: '0.25' },
      ]),
    ).toBe('0.5 EUR, 0.25 GBP');
    expect(formatCosts([{ currency: null, cost: '3' }])).toBe('3');
    expect(formatCosts([])).toBe('—');
  });
});
