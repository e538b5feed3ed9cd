import { z } from 'zod';
import {
  WEBHOOK_RESPONSES_PATH,
  WEBHOOKS_PATH,
  webhookResponseFilterSchema,
  webhookCreateSchema,
  webhookPatchSchema,
  webhookResponseViewSchema,
  type WebhookResponseView,
  webhookTriggerResultSchema,
  webhookTriggerSchema,
  webhookListItemSchema,
  webhookViewSchema,
} from '@pack/contracts';
import {
  idKey,
  idParams,
  idSchema,
  listQuery,
  listQuerySchema,
  pageOf,
  pageRequest,
  pageSchema,
  problemSpec,
  problemTable,
  route,
  type ListKey,
} from '@pack/http-kit';
import type { Responses } from '../domain/responses/responses';
import type { Triggers } from '../domain/firing/triggers';
import type { WebhookList } from '../domain/webhooks/webhook-list';
import type { Webhooks } from '../domain/webhooks/webhooks';

const problem = problemSpec;
const problems = problemTable({
  404: 'No such webhook among those of your Services',
});
const tooMany = {
  ...problem('More than webhook_response_rate_limit reads this minute'),
  headers: { 'Retry-After': 'Seconds until the next minute starts' },
};

const access = ['admin', 'service_owner'] as const;
const MASKED = 'authorization and secret are masked (at most the last four characters).';
const responseParams = z.object({ id: idSchema, response_id: idSchema });
const messageParams = z.object({
  message_id: z
    .string()
    .regex(/^msg_[A-Za-z0-9_-]{1,200}$/, 'must be a message id (msg_...)')
    .describe('The message_id of the response: its webhook-id header'),
});
const responsesQuery = listQuerySchema.extend(webhookResponseFilterSchema.shape);
/** Responses across webhooks are listed newest first, then by message id: both make the key. */
const responseAcrossKey: ListKey<WebhookResponseView> = {
  shape: ['date', 'string'],
  of: (item) => [new Date(item.created_at), item.message_id],
};
const acrossQuery = listQuery(responseAcrossKey).extend({
  ...webhookResponseFilterSchema.shape,
  webhook: idSchema.optional().describe("Only this webhook's responses"),
});

export function webhookRoutes(
  webhooks: Webhooks,
  listing: WebhookList,
  triggers: Triggers,
  responses: Responses,
) {
  return [
    route({
      method: 'post',
      path: WEBHOOKS_PATH,
      summary:
        'Create a webhook (spec endpoint 8): the full or the short form of spec 2.6. The signing secret is in the answer this once',
      access,
      body: webhookCreateSchema,
      responses: {
        201: {
          description: 'The created webhook, with its signing secret in full',
          schema: webhookViewSchema,
        },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ principal, body, log }) => {
        const created = await webhooks.create(principal, body);
        log.info({ webhook_id: created.id, service_id: created.service }, 'webhook created');
        return { status: 201, body: created };
      },
    }),
    route({
      method: 'get',
      path: WEBHOOKS_PATH,
      summary:
        "List the webhooks of your Services (admins: all), each with its Service's name and the health of its deliveries",
      access,
      query: listQuerySchema,
      responses: {
        200: { description: `A page of webhooks; ${MASKED}`, schema: pageSchema(webhookListItemSchema) },
        ...problems(400, 401, 403),
      },
      handler: async ({ principal, query, req }) => {
        const paging = pageRequest(query);
        const page = await listing.list(principal, paging.limit, paging.start);
        return { body: pageOf(req, query, page.count, page.items, idKey) };
      },
    }),
    route({
      method: 'get',
      path: `${WEBHOOKS_PATH}:id/`,
      summary: 'Read a webhook',
      access,
      params: idParams,
      responses: {
        200: { description: `The webhook; ${MASKED}`, schema: webhookViewSchema },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ principal, params }) => ({ body: await webhooks.get(principal, params.id) }),
    }),
    route({
      method: 'patch',
      path: `${WEBHOOKS_PATH}:id/`,
      summary:
        'Change a webhook; a masked authorization sent back keeps the stored one, except with a new target_url: then authorization must be sent again ("" for none); enabling clears disabled_reason',
      access,
      params: idParams,
      body: webhookPatchSchema,
      responses: {
        200: { description: `The changed webhook; ${MASKED}`, schema: webhookViewSchema },
        ...problems(400, 401, 403, 404),
        409: problem('A new target_url raced another change of the webhook; nothing was changed'),
      },
      handler: async ({ principal, params, body }) => ({
        body: await webhooks.update(principal, params.id, body),
      }),
    }),
    route({
      method: 'delete',
      path: `${WEBHOOKS_PATH}:id/`,
      summary: 'Delete a webhook and its responses',
      access,
      params: idParams,
      responses: { 204: { description: 'Deleted' }, ...problems(400, 401, 403, 404) },
      handler: async ({ principal, params }) => {
        await webhooks.remove(principal, params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'post',
      path: `${WEBHOOKS_PATH}:id/rotate_secret/`,
      summary:
        'Replace the signing secret; the new one is in the answer this once. Of concurrent rotations one wins, the others get 409',
      access,
      params: idParams,
      responses: {
        200: { description: 'The webhook with its new secret in full', schema: webhookViewSchema },
        ...problems(400, 401, 403, 404),
        409: problem(
          'Another rotation or change came first, or the secret was rotated less than 5 seconds ago; nothing was rotated',
        ),
      },
      handler: async ({ principal, params }) => ({ body: await webhooks.rotateSecret(principal, params.id) }),
    }),
    route({
      method: 'post',
      path: `${WEBHOOKS_PATH}:id/trigger/`,
      summary:
        'Fire a webhook manually. With change_instance_id, that Change Instance\'s state goes in the body; without, the state is "MANUAL". Wait and cooling times apply. A disabled webhook is not fired (409)',
      access,
      params: idParams,
      body: webhookTriggerSchema,
      responses: {
        202: { description: 'What became of the trigger', schema: webhookTriggerResultSchema },
        ...problems(400, 401, 403, 404),
        409: problem(
          'The webhook is disabled: errors.enabled says so; enable it (PATCH enabled: true) first',
        ),
      },
      handler: async ({ principal, params, body }) => ({
        status: 202,
        body: await triggers.manual(principal, params.id, body.change_instance_id),
      }),
    }),
    route({
      method: 'get',
      path: `${WEBHOOKS_PATH}:id/responses/`,
      summary:
        'The Webhook Responses of a webhook, newest first, optionally in one state or only resends / only first fires (webhook_response_rate_limit per minute)',
      access,
      params: idParams,
      query: responsesQuery,
      responses: {
        200: { description: 'A page of responses', schema: pageSchema(webhookResponseViewSchema) },
        ...problems(400, 401, 403, 404),
        429: tooMany,
      },
      handler: async ({ principal, params, query, req }) => {
        const { state, resend, ...paging } = query;
        const { limit, start } = pageRequest(paging);
        const page = await responses.list(principal, params.id, limit, start, {
          state,
          resend,
        });
        return { body: pageOf(req, paging, page.count, page.items, idKey) };
      },
    }),
    route({
      method: 'get',
      path: `${WEBHOOKS_PATH}:id/responses/:response_id/`,
      summary: 'One Webhook Response (webhook_response_rate_limit per minute)',
      access,
      params: responseParams,
      responses: {
        200: { description: 'The response', schema: webhookResponseViewSchema },
        ...problems(400, 401, 403, 404),
        429: tooMany,
      },
      handler: async ({ principal, params }) => ({
        body: await responses.get(principal, params.id, params.response_id),
      }),
    }),
    route({
      method: 'get',
      path: WEBHOOK_RESPONSES_PATH,
      summary:
        'The Webhook Responses of all your webhooks (admins: all), newest first, optionally of one webhook, in one state, or only resends / only first fires (webhook_response_rate_limit per minute)',
      access,
      query: acrossQuery,
      responses: {
        200: { description: 'A page of responses', schema: pageSchema(webhookResponseViewSchema) },
        ...problems(400, 401, 403, 404),
        429: tooMany,
      },
      handler: async ({ principal, query, req }) => {
        const { webhook, state, resend, ...paging } = query;
        const filter = { webhook, state, resend };
        const { limit, start } = pageRequest(paging);
        const page = await responses.listAcross(principal, filter, limit, start);
        return { body: pageOf(req, paging, page.count, page.items, responseAcrossKey) };
      },
    }),
    route({
      method: 'get',
      path: `${WEBHOOK_RESPONSES_PATH}:message_id/`,
      summary: 'One Webhook Response by its message_id (webhook_response_rate_limit per minute)',
      access,
      params: messageParams,
      responses: {
        200: { description: 'The response', schema: webhookResponseViewSchema },
        ...problems(400, 401, 403, 404),
        429: tooMany,
      },
      handler: async ({ principal, params }) => ({
        body: await responses.getByMessageId(principal, params.message_id),
      }),
    }),
  ];
}
