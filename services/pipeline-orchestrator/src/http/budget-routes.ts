import { z } from 'zod';
import { budgetPutSchema, budgetViewSchema } from '@pack/contracts';
import { idSchema, problemSpec as problem, problemTable, route } from '@pack/http-kit';
import type { Budgets } from '../domain/budgets/budgets';

export const BUDGET_PATH = '/v1/ai/services/:id/budget/';

const params = z.object({ id: idSchema.describe("The Service's id (catalog)") });
const problems = problemTable({
  403: 'Consumers may not read AI budgets; only administrators set them; owners read their own',
  404: 'No such Service',
});

/** A Service's AI budget (docs/decisions/0046). */
export function budgetRoutes(budgets: Budgets) {
  return [
    route({
      method: 'get',
      path: BUDGET_PATH,
      summary:
        "A Service's AI budget: its monthly limit (null: none) and this UTC month's spend of its AI processors, in the Currency setting's currency",
      access: ['admin', 'service_owner'],
      params,
      responses: {
        200: { description: 'The budget and the spend so far', schema: budgetViewSchema },
        400: problem('Invalid id'),
        ...problems(401, 403, 404),
      },
      handler: async ({ principal, params }) => ({ body: await budgets.get(principal, params.id) }),
    }),
    route({
      method: 'put',
      path: BUDGET_PATH,
      summary:
        "Set a Service's AI budget per calendar month (UTC); at the limit no new AI work of the Service starts (triggers and retriggers 409, automatic starts FAILED with budget_exhausted); null removes the limit",
      access: ['admin'],
      params,
      body: budgetPutSchema,
      responses: {
        200: { description: 'The budget as set, with the spend so far', schema: budgetViewSchema },
        400: problem('Invalid request; `errors` names each field (monthly_limit)'),
        ...problems(401, 403, 404),
      },
      handler: async ({ principal, params, body }) => ({
        body: await budgets.put(principal, params.id, body.monthly_limit),
      }),
    }),
  ];
}
