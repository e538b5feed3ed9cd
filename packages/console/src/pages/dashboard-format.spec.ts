import { axisLabel } from './dashboard-format';

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
