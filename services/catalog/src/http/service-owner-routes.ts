import { z } from 'zod';
import { nonBlankText, type GeneralSettings } from '@pack/contracts';
import { idKey, listQuerySchema, pageOf, pageRequest, pageSchema, route } from '@pack/http-kit';
import type { ServiceOwners } from '../domain/services/service-owners';
import { idParams, pick } from './common';
import { serviceOwnerView, toServiceOwnerListView, toServiceOwnerView } from './views';

const putBody = z.strictObject({
  username: nonBlankText(150),
  allow_service_creation: z.boolean(),
});

/** Per-owner permission to create Services (Service Creator settings, docs/decisions/0008). */
export function serviceOwnerRoutes(owners: ServiceOwners, settings: () => GeneralSettings) {
  return [
    route({
      method: 'get',
      path: '/v1/catalog/service_owners/',
      summary: 'List the service owners the catalog knows and whether each may create Services',
      access: ['admin'],
      query: listQuerySchema,
      responses: {
        200: { description: 'A page of service owners', schema: pageSchema(serviceOwnerView) },
        ...pick(400, 401, 403),
      },
      handler: async ({ query, req }) => {
        const paging = pageRequest(query);
        const page = await owners.list(paging.limit, paging.start);
        const globalSwitch = settings().service_creator.allow_service_creation;
        return {
          body: pageOf(
            req,
            query,
            page.count,
            page.items.map((record) => toServiceOwnerListView(record, globalSwitch)),
            idKey,
          ),
        };
      },
    }),
    route({
      method: 'get',
      path: '/v1/catalog/service_owners/:id/',
      summary: 'Whether a service owner may create Services (admins, or the owner about themself)',
      access: ['admin', 'service_owner'],
      params: idParams,
      responses: {
        200: { description: 'The permission', schema: serviceOwnerView },
        ...pick(400, 401, 403, 404),
      },
      handler: async ({ principal, params }) => ({
        body: toServiceOwnerView(await owners.get(principal, params.id)),
      }),
    }),
    route({
      method: 'put',
      path: '/v1/catalog/service_owners/:id/',
      summary: 'Allow or forbid a service owner to create Services',
      access: ['admin'],
      params: idParams,
      body: putBody,
      responses: { 200: { description: 'The permission', schema: serviceOwnerView }, ...pick(400, 401, 403) },
      handler: async ({ params, body }) => ({
        body: toServiceOwnerView(await owners.set(params.id, body.username, body.allow_service_creation)),
      }),
    }),
  ];
}
