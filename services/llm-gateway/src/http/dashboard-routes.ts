import { problemTable, route } from '@pack/http-kit';
import { z } from 'zod';
import { GROUP_BY, MAX_RANGE_DAYS, type Dashboard } from '../domain/calls/dashboard';

export const DASHBOARD_PATH = '/v1/ai/dashboard/';
const DEFAULT_RANGE_MS = 7 * 86_400_000;

const instant = (what: string) =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], {
      error: 'must be an ISO 8601 date (2026-11-23) or date-time (2026-11-23T14:00:00Z)',
    })
    .transform((text) => new Date(text))
    .optional()
    .describe(`${what} (ISO 8601 date or date-time, UTC unless an offset is given)`);

const querySchema = z.strictObject({
  from: instant(
    `Start of the range; default: 7 days before \`to\`. Not after \`to\`, and at most ${MAX_RANGE_DAYS} days before it (400 naming \`query.from\` otherwise)`,
  ),
  to: instant('End of the range (exclusive); default: now'),
  group_by: z.enum(GROUP_BY, { error: 'must be one of model, day, processor' }).default('model'),
});

const stats = {
  calls: z.number().int(),
  errors: z.number().int(),
  error_rate: z.number().describe('errors / calls'),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cost: z
    .string()
    .nullable()
    .describe(
      'Exact sum of the priced calls as a decimal string, in `currency`, when they were all made in one currency; null when Charges Settings hide costs from the caller, or when the calls span several currencies (then `costs` holds one sum per currency: amounts in different currencies are never added)',
    ),
  currency: z
    .string()
    .nullable()
    .describe(
      "The currency of `cost`: the Currency setting's when the calls were made (prices are taken to be in it; amounts are never converted). Null with `cost`, and while the Currency group is disabled",
    ),
  costs: z
    .array(
      z.object({
        currency: z.string().nullable().describe('Null while the Currency group is disabled'),
        cost: z.string().describe('Exact sum of the priced calls made in this currency'),
      }),
    )
    .describe(
      'One exact sum per currency the calls were made in, by code (no calls: 0 in the Currency setting); [] when costs are hidden',
    ),
  unpriced_calls: z.number().int().describe('Calls of models without prices: not in `cost`'),
  fallbacks: z
    .number()
    .int()
    .describe(
      "Calls made to a model as a fallback of the model a request asked for (in `calls` too; with group_by=model, counted under the fallback's own model)",
    ),
  cost_covers: z
    .enum(['all_calls', 'priced_calls_only'])
    .nullable()
    .describe(
      'What `cost` sums: priced_calls_only when some call was unpriced (its cost is unknown, not 0); null when costs are hidden',
    ),
  p50_latency_ms: z
    .number()
    .int()
    .nullable()
    .describe('Median call latency, at most 10% above the true value'),
  p95_latency_ms: z
    .number()
    .int()
    .nullable()
    .describe('95th percentile call latency, at most 10% above the true value'),
};

const groupsSchema = z.array(
  z.object({
    key: z
      .union([z.number().int(), z.string(), z.null()])
      .describe('The LLM model id, the UTC day (YYYY-MM-DD), or the processor id (null: no processor)'),
    ...stats,
  }),
);

const dashboardSchema = z.object({
  from: z.string().describe('The range start used: `from` taken back to the start of its UTC hour'),
  to: z.string().describe('The range end used: `to` taken forward to the end of its UTC hour'),
  group_by: z.enum(GROUP_BY),
  currency: z
    .string()
    .nullable()
    .describe(
      'The Currency setting, the currency of calls made now (each cost figure names its own); null when costs are hidden or the Currency group is disabled',
    ),
  costs_hidden: z.boolean(),
  totals: z.object(stats).describe('Generation calls (kind generation): processors and pipelines'),
  groups: groupsSchema.describe('Generation calls per group'),
  connection_tests: z
    .object({ totals: z.object(stats), groups: groupsSchema })
    .describe(
      "Calls of kind connection_test: admins' connection tests (POST /v1/ai/llm_models/test_connection/<id>/), which providers bill too, passed or failed, with their tokens, cost and currency; never counted in `totals` or `groups`. They belong to no processor, so service owners see none",
    ),
});

const problems = problemTable({
  400: 'A bad from, to or group_by, from after to, or a range too long; `errors` names the field',
});

export function dashboardRoutes(dashboard: Dashboard) {
  return [
    route({
      method: 'get',
      path: DASHBOARD_PATH,
      summary: `AI Integration dashboard: calls of the LLM models from hourly rollups, generations and connection tests apart, each cost in its currency (admins: every call; service owners: the calls of their own Services' processors; at most ${MAX_RANGE_DAYS} days)`,
      access: ['admin', 'service_owner'],
      query: querySchema,
      responses: {
        200: { description: 'Totals and one entry per group', schema: dashboardSchema },
        ...problems(400, 401, 403),
      },
      handler: async ({ principal, query }) => {
        const to = query.to ?? new Date();
        const from = query.from ?? new Date(to.getTime() - DEFAULT_RANGE_MS);
        return { body: await dashboard.view(principal, from, to, query.group_by) };
      },
    }),
  ];
}
