import { z } from 'zod';
import {
  executionContextViewSchema,
  pipelineStatusSchema,
  pipelineSummarySchema,
  pipelineViewSchema,
  stagePathSchema,
  stageOfPath,
  type Principal,
} from '@pack/contracts';
import { NotFoundError } from '@pack/errors';
import {
  idKey,
  idParams,
  idSchema,
  listQuerySchema,
  pageOf,
  pageRequest,
  pageSchema,
  problemSpec,
  problemTable,
  route,
} from '@pack/http-kit';
import type { Pipelines } from '../domain/pipelines/pipelines';
import type { PipelineRecord } from '../domain/records/pipeline-records';
import type { PipelineReads } from '../domain/pipelines/pipeline-reads';
import type { ContextReads } from '../domain/pipelines/context-reads';

export const PACK_PATH = '/v1/external/serviceowner/pack/';

const problem = problemSpec;
const problems = problemTable({
  400: 'Invalid id in the path',
  403: 'Consumers may not run pipelines',
  404: 'No such Service Item (with an approved declaration) or pipeline among your Services',
});

const latestQuery = listQuerySchema.extend({
  status: pipelineStatusSchema.optional(),
});

const itemParams = z.object({ id: idSchema });
const triggerParams = z.object({
  id: idSchema,
  // Any other value is a stage that does not exist: 404, not 400.
  stage: z.string().describe('config, verify or execution (lowercase); anything else is 404'),
});

/**
 * Endpoints 3, 6 and 7, the list of latest pipelines and a Service Item's execution context;
 * costs shown as the Charges Settings allow the caller.
 */
export function pipelineRoutes(pipelines: Pipelines, reads: PipelineReads, context: ContextReads) {
  const access = ['admin', 'service_owner'] as const;
  const view = (principal: Principal, pipeline: PipelineRecord) => reads.view(principal, pipeline);
  return [
    route({
      method: 'get',
      path: `${PACK_PATH}pipelines/`,
      summary:
        'The latest pipeline of each Service Item of your Services (admins: all), newest first, with its stage states, processor and model names, and status; filter by status',
      access,
      query: latestQuery,
      responses: {
        200: { description: 'A page of latest pipelines', schema: pageSchema(pipelineSummarySchema) },
        400: problem('Invalid query; `errors` names each field'),
        ...problems(401, 403),
      },
      handler: async ({ principal, query, req }) => {
        const filter = query.status === undefined ? {} : { status: query.status };
        const paging = pageRequest(query);
        const page = await reads.latest(principal, filter, paging.limit, paging.start);
        return { body: pageOf(req, query, page.count, page.items, idKey) };
      },
    }),
    route({
      method: 'post',
      path: `${PACK_PATH}trigger/service_item/:id/:stage/`,
      summary:
        "Start a stage of the Service Item's pipeline from its latest approved declaration: the one approved last, even when older than another approved one (the catalog's latest_approved_declaration). config starts a new run; verify and execution need the previous stage's PackData",
      access,
      params: triggerParams,
      responses: {
        202: { description: 'The pipeline with the stage started', schema: pipelineViewSchema },
        ...problems(400, 401, 403, 404),
        409: problem(
          "AI processors are switched off (errors name ai_integration.show_ai_processor), no active processor for the stage, the previous stage's PackData is missing, the stage is already running, or the Change Instance of the latest approved declaration is CANCELLED (nothing runs for it)",
        ),
      },
      handler: async ({ principal, params }) => {
        const stage = stagePathSchema.safeParse(params.stage);
        if (!stage.success) throw new NotFoundError(`No stage ${params.stage}: config, verify or execution`);
        const pipeline = await pipelines.trigger(principal, params.id, stageOfPath(stage.data));
        return { status: 202, body: await view(principal, pipeline) };
      },
    }),
    route({
      method: 'get',
      path: `${PACK_PATH}pipelines/latest/service_item/:id/`,
      summary: 'The latest pipeline of a Service Item',
      access,
      params: itemParams,
      responses: {
        200: { description: 'The pipeline', schema: pipelineViewSchema },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ principal, params }) => ({
        body: await view(principal, await pipelines.latest(principal, params.id)),
      }),
    }),
    route({
      method: 'get',
      path: `${PACK_PATH}pipelines/context/service_item/:id/`,
      summary:
        "The Service Item's execution context: exactly what its next CONFIG request carries (a retrigger, a push into EXECUTION with retrigger=true, a config trigger), as that text and as its parts. Its earlier runs, oldest first, each with the declaration it ran on, every stage's state, error and PackData (generated or pushed from outside), the retrigger feedback and the Pack Optimizer's notes on it; fitted to the character budget of the model of the Service's active config processor (a quarter of the model's context window at 3 characters a token, at most 48000; 6144 for a model name not known): the newest run whole first, the next one cut with a marker, older ones left out and named",
      access,
      params: itemParams,
      responses: {
        200: { description: 'The execution context', schema: executionContextViewSchema },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ principal, params }) => ({ body: await context.read(principal, params.id) }),
    }),
    route({
      method: 'get',
      path: `${PACK_PATH}pipelines/:id/`,
      summary: 'A pipeline by id',
      access,
      params: idParams,
      responses: {
        200: { description: 'The pipeline', schema: pipelineViewSchema },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ principal, params }) => ({
        body: await view(principal, await pipelines.get(principal, params.id)),
      }),
    }),
  ];
}
