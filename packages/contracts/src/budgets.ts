import { z } from 'zod';

/**
 * A Service's AI budget (docs/decisions/0046): a monthly limit in the
 * Currency setting's currency per calendar month (UTC), and the month's spend so far.
 */

/** Decimals a limit may have (the same as a price's). */
export const MAX_BUDGET_DECIMALS = 6;
/** The largest limit: the month's spend is kept as a 64-bit count of 1e-12 units (9.2 million). */
export const MAX_BUDGET_LIMIT = 1_000_000;

const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
/** Exactly the limits taken: from 0 to 1,000,000 with at most 6 decimals (the OpenAPI pattern). */
const LIMIT = /^(?:(?:0|[1-9][0-9]{0,5})(?:\.[0-9]{1,6})?|1000000(?:\.0{1,6})?)$/;

export const budgetLimitSchema = z
  .string()
  .max(40)
  .meta({ pattern: LIMIT.source })
  .transform((value, ctx) => {
    const match = DECIMAL.exec(value);
    const message = !match
      ? 'must be a non-negative decimal string such as "25.00"'
      : (match[2] ?? '.').length - 1 > MAX_BUDGET_DECIMALS
        ? `must have at most ${MAX_BUDGET_DECIMALS} decimals`
        : !LIMIT.test(value)
          ? `must be at most ${MAX_BUDGET_LIMIT}`
          : null;
    if (message === null) return value;
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  })
  .nullable()
  .describe(
    `The most the Service's AI calls may cost per calendar month (UTC), in the Currency setting's currency: a decimal string with at most ${MAX_BUDGET_DECIMALS} decimals, from "0" to "${MAX_BUDGET_LIMIT}"; null: no limit`,
  );

export const budgetPutSchema = z.strictObject({ monthly_limit: budgetLimitSchema });
export type BudgetPut = z.infer<typeof budgetPutSchema>;

export const budgetViewSchema = z.object({
  service_id: z.number().int(),
  monthly_limit: z.string().nullable().describe('Decimal string as set; null: no limit'),
  spent_this_month: z
    .string()
    .describe(
      'Exact decimal sum of the costs of every priced AI call of the Service this UTC month (late, superseded and fallback calls included), with at least 6 decimals',
    ),
  unpriced_calls_this_month: z
    .number()
    .int()
    .describe('Calls of this month whose model has no prices: not in spent_this_month, never counted as 0'),
  month: z.string().describe('The UTC month counted, "YYYY-MM"'),
  currency: z.string().describe("The Currency setting's currency"),
  exhausted: z.boolean().describe('spent_this_month >= monthly_limit: no new AI work starts for the Service'),
});
export type BudgetView = z.infer<typeof budgetViewSchema>;
