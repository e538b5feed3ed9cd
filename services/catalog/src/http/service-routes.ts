import { z } from 'zod';
import { nonBlankText, storedText } from '@pack/contracts';
import { idKey, listQuerySchema, pageOf, pageRequest, pageSchema, route } from '@pack/http-kit';
import type { ServiceCatalog } from '../domain/services/services';
import { idParams, pick } from './common';
import { serviceView, toServiceView } from './views';

const name = nonBlankText(200);
const description = storedText().max(5000);
const owner = z.strictObject({
  id: z.number().int().positive(),
  name: nonBlankText(150),
});

/** Whether consumers may submit through the submission builder; null: the settings default decides. */
const allowSubmit = z.boolean().nullable();
const createBody = z.strictObject({
  name,
  description: description.default(''),
  auto_approval: z.boolean().default(false),
  allow_submit_submission_builder: allowSubmit.default(null),
  /** Admins only: the owner to assign (a service owner always owns what they create). */
  owner: owner.optional(),
});
const updateBody = z.strictObject({
  name: name.optional(),
  description: description.optional(),
  auto_approval: z.boolean().optional(),
  allow_submit_submission_builder: allowSubmit.optional(),
  owner: owner.optional(),
});

export function serviceRoutes(services: ServiceCatalog) {
  return [
    route({
      method: 'post',
      path: '/v1/catalog/services/',
      summary: 'Create a Service (admins, and service owners while Service Creator allows it)',
      access: ['admin', 'service_owner'],
      body: createBody,
      responses: {
        201: { description: 'Created', schema: serviceView },
        ...pick(400, 401, 403, 409),
      },
      handler: async ({ principal, body }) => ({
        status: 201,
        body: toServiceView(await services.create(principal, body)),
      }),
    }),
    route({
      method: 'get',
      path: '/v1/catalog/services/',
      summary: 'List Services: a service owner sees their own, consumers and admins every Service',
      access: 'authenticated',
      query: listQuerySchema,
      responses: {
        200: { description: 'A page of Services', schema: pageSchema(serviceView) },
        ...pick(400, 401),
      },
      handler: async ({ principal, query, req }) => {
        const paging = pageRequest(query);
        const page = await services.list(principal, paging.limit, paging.start);
        return { body: pageOf(req, query, page.count, page.items.map(toServiceView), idKey) };
      },
    }),
    route({
      method: 'get',
      path: '/v1/catalog/services/:id/',
      summary: 'Read a Service',
      access: 'authenticated',
      params: idParams,
      responses: { 200: { description: 'The Service', schema: serviceView }, ...pick(400, 401, 404) },
      handler: async ({ principal, params }) => ({
        body: toServiceView(await services.get(principal, params.id)),
      }),
    }),
    route({
      method: 'patch',
      path: '/v1/catalog/services/:id/',
      summary: 'Change a Service (its owner or an admin; only an admin reassigns the owner)',
      access: ['admin', 'service_owner'],
      params: idParams,
      body: updateBody,
      responses: {
        200: { description: 'The changed Service', schema: serviceView },
        ...pick(400, 401, 403, 404, 409),
      },
      handler: async ({ principal, params, body }) => ({
        body: toServiceView(await services.update(principal, params.id, body)),
      }),
    }),
    route({
      method: 'delete',
      path: '/v1/catalog/services/:id/',
      summary: 'Delete a Service that has no PENDING, APPROVED or IN_PROGRESS change instance',
      access: ['admin', 'service_owner'],
      params: idParams,
      responses: { 204: { description: 'Deleted' }, ...pick(400, 401, 403, 404, 409) },
      handler: async ({ principal, params }) => {
        await services.remove(principal, params.id);
        return { status: 204 };
      },
    }),
  ];
}
