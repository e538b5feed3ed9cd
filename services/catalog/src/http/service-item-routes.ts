import { z } from 'zod';
import { idKey, listQuerySchema, pageOf, pageRequest, pageSchema, route } from '@pack/http-kit';
import type { ChangeInstanceQueries } from '../domain/change-instances/change-instance-queries';
import { idParams, optionalId, pick } from './common';
import { declarationValue, serviceItemView, toServiceItemView } from './views';

const latestApprovedView = z.object({
  service_item: z.number().int(),
  service: z.number().int(),
  change_instance: z.number().int(),
  declaration_id: z.number().int(),
  declaration: z.record(z.string(), z.unknown()),
  approved_at: z.string(),
});

export function serviceItemRoutes(queries: ChangeInstanceQueries) {
  return [
    route({
      method: 'get',
      path: '/v1/catalog/service_items/',
      summary:
        'List Service Items in the caller scope (a consumer: their own; a service owner: those of their Services)',
      access: 'authenticated',
      query: listQuerySchema.extend({ service: optionalId.describe('Only Service Items of this Service') }),
      responses: {
        200: { description: 'A page of Service Items', schema: pageSchema(serviceItemView) },
        ...pick(400, 401),
      },
      handler: async ({ principal, query, req }) => {
        const paging = pageRequest(query);
        const page = await queries.listItems(
          principal,
          { service_id: query.service },
          paging.limit,
          paging.start,
        );
        const results = page.items.map((item) =>
          toServiceItemView(item, page.services.get(item.service_id), page.pointers.get(item._id)),
        );
        return { body: pageOf(req, query, page.count, results, idKey) };
      },
    }),
    route({
      method: 'get',
      path: '/v1/catalog/service_items/:id/',
      summary: 'Read a Service Item',
      access: 'authenticated',
      params: idParams,
      responses: {
        200: { description: 'The Service Item', schema: serviceItemView },
        ...pick(400, 401, 404),
      },
      handler: async ({ principal, params }) => {
        const { item, service, pointers } = await queries.getItem(principal, params.id);
        return { body: toServiceItemView(item, service, pointers) };
      },
    }),
    route({
      method: 'get',
      path: '/v1/catalog/service_items/:id/latest_approved_declaration/',
      summary:
        'The latest approved declaration of a Service Item (what the pipeline configures from); 404 before any approval',
      access: 'authenticated',
      params: idParams,
      responses: {
        200: { description: 'The declaration', schema: latestApprovedView },
        ...pick(400, 401, 404),
      },
      handler: async ({ principal, params }) => {
        const { detail, declaration } = await queries.latestApproved(principal, params.id);
        return {
          body: {
            service_item: detail.item._id,
            service: detail.item.service_id,
            change_instance: detail.pointers.latest_approved_change_instance_id ?? 0,
            declaration_id: declaration._id,
            declaration: declarationValue(declaration.content),
            approved_at: (detail.pointers.latest_approved_at ?? declaration.created_at).toISOString(),
          },
        };
      },
    }),
  ];
}
