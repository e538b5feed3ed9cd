import { z } from 'zod';
import {
  CHANGE_INSTANCE_STATES,
  changeInstanceStateSchema,
  nonBlankText,
  type GeneralSettings,
} from '@pack/contracts';
import {
  documentInput,
  idKey,
  listQuerySchema,
  pageOf,
  pageRequest,
  pageSchema,
  route,
} from '@pack/http-kit';
import type { ChangeInstanceQueries } from '../domain/change-instances/change-instance-queries';
import type { ChangeInstanceMoves } from '../domain/change-instances/move-change-instance';
import {
  ALL_STATES_KEYWORD,
  parseStateParameter,
  resolveStateFilter,
} from '../domain/change-instances/state-filter';
import { idParams, optionalId, pick } from './common';
import {
  changeInstanceDetailView,
  changeInstanceView,
  toChangeInstanceDetailView,
  toChangeInstanceView,
} from './views';

const stateName = { type: 'string', enum: [...CHANGE_INSTANCE_STATES, ALL_STATES_KEYWORD] };

const listQuery = listQuerySchema.extend({
  state: documentInput(
    z
      .union([z.string(), z.array(z.string())])
      .describe(
        `States to list, repeated or comma-separated (${CHANGE_INSTANCE_STATES.join(', ')}), or ${ALL_STATES_KEYWORD}, in any letter case; at least one; without the parameter the GUI Table Settings default of the caller role applies`,
      ),
    { anyOf: [stateName, { type: 'array', items: stateName, minItems: 1 }] },
  )
    .optional()
    .transform((raw, ctx) => {
      const parsed = parseStateParameter(raw);
      if (parsed.states?.length === 0) {
        ctx.addIssue({
          code: 'custom',
          message: `must name at least one state: ${CHANGE_INSTANCE_STATES.join(', ')} or ${ALL_STATES_KEYWORD}`,
        });
        return z.NEVER;
      }
      if (parsed.invalid.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown state ${parsed.invalid.join(', ')}; use ${CHANGE_INSTANCE_STATES.join(', ')} or ${ALL_STATES_KEYWORD}`,
        });
        return z.NEVER;
      }
      return parsed.states;
    }),
  service: optionalId.describe('Only change instances of this Service'),
  service_item: optionalId.describe('Only change instances of this Service Item'),
});

const patchBody = z.strictObject({
  state: changeInstanceStateSchema,
  /** Why, e.g. a rejection's reasons; kept with the instance and sent with the event. */
  reasons: z.array(nonBlankText(2000)).max(50).default([]),
});

/** Header naming the state filter a list applied, so a caller can tell a default filter from an empty result. */
export const STATE_FILTER_HEADER = 'x-state-filter';

export function changeInstanceRoutes(
  queries: ChangeInstanceQueries,
  moves: ChangeInstanceMoves,
  settings: () => GeneralSettings,
) {
  return [
    route({
      method: 'get',
      path: '/v1/catalog/change_instances/',
      summary:
        'List change instances in the caller scope, newest first; without ?state= the GUI Table Settings default of the caller role applies',
      access: 'authenticated',
      query: listQuery,
      responses: {
        200: {
          description: 'A page of change instances',
          schema: pageSchema(changeInstanceView),
          headers: { [STATE_FILTER_HEADER]: `The states listed, comma-separated, or ${ALL_STATES_KEYWORD}` },
        },
        ...pick(400, 401),
      },
      handler: async ({ principal, query, req }) => {
        const filter = resolveStateFilter(query.state, principal.role, settings().gui_table);
        const paging = pageRequest(query);
        const page = await queries.list(
          principal,
          { states: filter.states, service_id: query.service, service_item_id: query.service_item },
          paging.limit,
          paging.start,
        );
        return {
          body: pageOf(
            req,
            query,
            page.count,
            page.items.map((ci) => toChangeInstanceView(ci, page.services.get(ci.service_id))),
            idKey,
          ),
          headers: { [STATE_FILTER_HEADER]: filter.states ? filter.states.join(',') : ALL_STATES_KEYWORD },
        };
      },
    }),
    route({
      method: 'get',
      path: '/v1/catalog/change_instances/:id/',
      summary: 'Read a change instance with its declaration and history',
      access: 'authenticated',
      params: idParams,
      responses: {
        200: { description: 'The change instance', schema: changeInstanceDetailView },
        ...pick(400, 401, 404),
      },
      handler: async ({ principal, params }) => ({
        body: toChangeInstanceDetailView(await queries.get(principal, params.id)),
      }),
    }),
    route({
      method: 'patch',
      path: '/v1/catalog/change_instances/:id/',
      summary:
        'Move a change instance to another state (its Service Owner or an admin; the consumer who submitted it may cancel it while PENDING); illegal transitions are 409',
      access: ['admin', 'service_owner', 'consumer'],
      params: idParams,
      body: patchBody,
      responses: {
        200: { description: 'The change instance', schema: changeInstanceDetailView },
        ...pick(400, 401, 403, 404, 409),
      },
      handler: async ({ principal, params, body }) => ({
        body: toChangeInstanceDetailView(await moves.move(principal, params.id, body.state, body.reasons)),
      }),
    }),
  ];
}
