import {
  processorCreateSchema,
  processorKindSchema,
  processorPatchSchema,
  processorViewSchema,
} from '@pack/contracts';
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
import type { Processors } from '../domain/processors/processors';

export const PROCESSORS_PATH = '/v1/ai/processors/';

const problem = problemSpec;
const problems = problemTable({
  403: 'Consumers may not manage AI processors',
  404: 'No such AI processor, or not one of your Services',
});
const conflict = problem(
  'Another processor is the active one of this Service and kind, or a concurrent change came first',
);

const SCHEMA_NOTE =
  'response_schema: refused (400) on a change_instance_validator; stored but not used on a pack_optimizer; ignored on a universal_executor (response_schema_note says so).';

const listQuery = listQuerySchema.extend({
  service: idSchema.optional().describe('Only processors of this Service'),
  kind: processorKindSchema.optional().describe('Only processors of this kind'),
});

export function processorRoutes(processors: Processors) {
  const access = ['admin', 'service_owner'] as const;
  return [
    route({
      method: 'post',
      path: PROCESSORS_PATH,
      summary: `Create an AI processor for one of your Services (admins: any Service). ${SCHEMA_NOTE}`,
      access,
      body: processorCreateSchema,
      responses: {
        201: { description: 'The created processor', schema: processorViewSchema },
        ...problems(400, 401, 403),
        409: conflict,
      },
      handler: async ({ principal, body }) => ({
        status: 201,
        body: await processors.create(principal, body),
      }),
    }),
    route({
      method: 'get',
      path: PROCESSORS_PATH,
      summary: 'List the AI processors of your Services (admins: all)',
      access,
      query: listQuery,
      responses: {
        200: { description: 'A page of processors', schema: pageSchema(processorViewSchema) },
        ...problems(400, 401, 403),
      },
      handler: async ({ principal, query, req }) => {
        const paging = pageRequest(query);
        const page = await processors.list(principal, query, paging.limit, paging.start);
        return { body: pageOf(req, query, page.count, page.items, idKey) };
      },
    }),
    route({
      method: 'get',
      path: `${PROCESSORS_PATH}:id/`,
      summary: 'Read an AI processor',
      access,
      params: idParams,
      responses: {
        200: { description: 'The processor', schema: processorViewSchema },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ principal, params }) => ({ body: await processors.get(principal, params.id) }),
    }),
    route({
      method: 'patch',
      path: `${PROCESSORS_PATH}:id/`,
      summary: `Change any fields of an AI processor except its Service; activating it takes its Service's slot for that kind (409 while another holds it). ${SCHEMA_NOTE}`,
      access,
      params: idParams,
      body: processorPatchSchema,
      responses: {
        200: { description: 'The changed processor', schema: processorViewSchema },
        ...problems(400, 401, 403, 404),
        409: conflict,
      },
      handler: async ({ principal, params, body }) => ({
        body: await processors.update(principal, params.id, body),
      }),
    }),
    route({
      method: 'delete',
      path: `${PROCESSORS_PATH}:id/`,
      summary: 'Delete an AI processor (an active one frees its slot)',
      access,
      params: idParams,
      responses: {
        204: { description: 'Deleted' },
        ...problems(400, 401, 403, 404),
        409: conflict,
      },
      handler: async ({ principal, params }) => {
        await processors.remove(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
