import {
  llmModelCreateSchema,
  llmModelPatchSchema,
  llmModelViewSchema,
  PROVIDER_ATTEMPTS,
  PROVIDER_BACKOFF_MAX_MS,
  withoutReadOnlyFields,
  type LlmModelCreate,
  type LlmModelView,
  type Role,
} from '@pack/contracts';
import {
  idKey,
  idParams,
  listQuerySchema,
  pageOf,
  pageRequest,
  pageSchema,
  problemSpec,
  problemTable,
  route,
} from '@pack/http-kit';
import { z } from 'zod';
import type { ConnectionTester } from '../domain/providers/connection-test';
import type { LlmModels } from '../domain/models/llm-models';
import { loggableChange } from '../domain/models/extra-data';

export const LLM_MODELS_PATH = '/v1/ai/llm_models/';

const problem = problemSpec;
const problems = problemTable({
  404: 'No such LLM model',
  409: 'Another LLM model has this name',
});

const SECRETS_NOTE =
  'Secrets in extra_data are masked: admins see at most the last four characters, other roles none (and no request_payload value). Prices are null for a caller from whom Charges Settings hide costs.';

const connectionTestSchema = z.object({
  ok: z.literal(true),
  latency_ms: z.number().int(),
  reply_excerpt: z.string().describe('The first characters of the generated text'),
  usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
  cost: z
    .union([z.string(), z.object({ unpriced: z.literal(true) }), z.null()])
    .describe(
      'A decimal string, or {unpriced: true} when the model has no prices; null when Charges Settings hide costs from the caller',
    ),
  currency: z
    .string()
    .nullable()
    .describe(
      "The currency of `cost`: the Currency setting's, which the model's prices are taken to be in; null when costs are hidden or the Currency group is disabled. The test is recorded as a call of kind connection_test (GET /v1/ai/dashboard/ `connection_tests`)",
    ),
  attempts: z.number().int().describe('Provider calls made, retries included'),
  breaker: z.enum(['closed', 'open', 'half_open']).describe("State of the model's circuit breaker"),
});

export function llmModelRoutes(
  models: LlmModels,
  tester: ConnectionTester,
  maySeeCosts: (role: Role) => boolean = () => true,
  /** Whether a currency is named beside costs (the Currency group's ENABLED). */
  currencyNamed: () => boolean = () => true,
) {
  /** Prices follow the Charges Settings wherever costs do: from them, costs can be recomputed. */
  const pricesFor = (view: LlmModelView, role: Role): LlmModelView =>
    maySeeCosts(role) ? view : { ...view, input_price_per_1m_tokens: null, output_price_per_1m_tokens: null };
  return [
    route({
      method: 'post',
      path: `${LLM_MODELS_PATH}test_connection/:id/`,
      summary: `Test an LLM Model (spec endpoint 2): sends a short prompt and passes only when text comes back. Every test, passed or failed, is recorded as a call of kind connection_test with its tokens, cost and currency (providers bill it like any call), shown apart from generations in the AI Integration dashboard. The body overrides stored fields for this test only (a masked secret keeps the stored one); the model itself is not changed. The provider is asked even while the model's circuit breaker is open, and a passing test of the model as stored closes it. Up to ${PROVIDER_ATTEMPTS} provider calls, each within the model's timeout: a 5xx, 429 or network error is tried again after at most ${PROVIDER_BACKOFF_MAX_MS / 1000} s, a timeout is not; the API gateway waits as long as that takes`,
      access: ['admin'],
      params: idParams,
      body: llmModelPatchSchema,
      responses: {
        200: { description: 'The model answered', schema: connectionTestSchema },
        ...problems(400, 401, 403, 404),
        502: problem('The provider failed, answered with an error or nothing, or the target is refused'),
        504: problem("The provider did not answer within the model's timeout"),
      },
      handler: async ({ principal, params, body, log }) => {
        const { model, asStored } = await models.testTarget(params.id, withoutReadOnlyFields(body));
        const tested = await tester.test(model, asStored);
        const result = maySeeCosts(principal.role)
          ? { ...tested, currency: currencyNamed() ? tested.currency : null }
          : { ...tested, cost: null, currency: null };
        log.info(
          { model_id: params.id, provider: model.provider, latency_ms: result.latency_ms },
          'llm connection test passed',
        );
        return { body: result };
      },
    }),
    route({
      method: 'post',
      path: LLM_MODELS_PATH,
      summary: 'Create an LLM Model (spec endpoint 1); extra_data holds the keys of its provider',
      access: ['admin'],
      body: llmModelCreateSchema,
      responses: {
        201: { description: `The created model. ${SECRETS_NOTE}`, schema: llmModelViewSchema },
        ...problems(400, 401, 403, 409),
      },
      handler: async ({ principal, body, log }) => {
        const created = await models.create(principal.role, withoutReadOnlyFields(body) as LlmModelCreate);
        // The logger redacts secret-named keys at any depth (tested in secrets.test.ts).
        log.debug({ model_id: created.id, change: loggableChange(body) }, 'llm model created');
        return { status: 201, body: created };
      },
    }),
    route({
      method: 'get',
      path: LLM_MODELS_PATH,
      summary: 'List LLM Models (admins and service owners)',
      access: ['admin', 'service_owner'],
      query: listQuerySchema,
      responses: {
        200: { description: `A page of models. ${SECRETS_NOTE}`, schema: pageSchema(llmModelViewSchema) },
        ...problems(400, 401, 403),
      },
      handler: async ({ principal, query, req }) => {
        const paging = pageRequest(query);
        const page = await models.list(principal.role, paging.limit, paging.start);
        const items = page.items.map((view) => pricesFor(view, principal.role));
        return { body: pageOf(req, query, page.count, items, idKey) };
      },
    }),
    route({
      method: 'get',
      path: `${LLM_MODELS_PATH}:id/`,
      summary: 'Read an LLM Model (admins and service owners)',
      access: ['admin', 'service_owner'],
      params: idParams,
      responses: {
        200: { description: `The model. ${SECRETS_NOTE}`, schema: llmModelViewSchema },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ principal, params }) => ({
        body: pricesFor(await models.get(principal.role, params.id), principal.role),
      }),
    }),
    route({
      method: 'patch',
      path: `${LLM_MODELS_PATH}:id/`,
      summary:
        'Change any fields of an LLM Model; extra_data keys merge into the stored ones, a masked secret sent back keeps the stored one, a new provider needs its whole extra_data',
      access: ['admin'],
      params: idParams,
      body: llmModelPatchSchema,
      responses: {
        200: { description: `The changed model. ${SECRETS_NOTE}`, schema: llmModelViewSchema },
        ...problems(400, 401, 403, 404, 409),
      },
      handler: async ({ principal, params, body, log }) => {
        const updated = await models.update(principal.role, params.id, withoutReadOnlyFields(body));
        log.debug({ model_id: params.id, change: loggableChange(body) }, 'llm model changed');
        return { body: updated };
      },
    }),
    route({
      method: 'delete',
      path: `${LLM_MODELS_PATH}:id/`,
      summary: 'Delete an LLM Model; refused (409) while an active AI processor uses it',
      access: ['admin'],
      params: idParams,
      responses: {
        204: { description: 'Deleted' },
        ...problems(400, 401, 403, 404),
        409: problem('An active AI processor uses this model; `detail` names the processors'),
      },
      handler: async ({ params }) => {
        await models.remove(params.id);
        return { status: 204 };
      },
    }),
  ];
}
