import { budgetPutSchema } from './budgets';

describe('a monthly AI budget limit', () => {
  it.each(['0', '25.00', '0.000001', '999999.999999', '1000000', '1000000.000000', null])(
    'takes %j as it is',
    (limit) => {
      expect(budgetPutSchema.parse({ monthly_limit: limit })).toEqual({ monthly_limit: limit });
    },
  );

  it.each([
    ['-1', 'decimal string'],
    ['1e3', 'decimal string'],
    ['01', 'decimal string'],
    ['1.', 'decimal string'],
    ['1.1234567', 'at most 6 decimals'],
    ['1000000.01', 'at most 1000000'],
    ['99999999999999999999', 'at most 1000000'],
  ])('refuses %j (%s)', (limit, words) => {
    const parsed = budgetPutSchema.safeParse({ monthly_limit: limit });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({
      path: ['monthly_limit'],
      message: expect.stringContaining(words),
    });
  });

  it('refuses a number, and a missing field', () => {
    expect(budgetPutSchema.safeParse({ monthly_limit: 25 }).success).toBe(false);
    expect(budgetPutSchema.safeParse({}).success).toBe(false);
  });
});
