import { z } from 'zod';
import {
  WEBHOOKS_PATH,
  webhookRecoverSchema,
  webhookRecoveryViewSchema,
  webhookTriggerResultSchema,
} from '@pack/contracts';
import { idParams, idSchema, problemSpec as problem, problemTable, route } from '@pack/http-kit';
import type { Resends } from '../domain/recovery/resends';

const access = ['admin', 'service_owner'] as const;
const problems = problemTable({
  404: 'No such webhook (or response, or recovery) among those of your Services',
});
const responseParams = z.object({ id: idSchema, response_id: idSchema });
const recoveryParams = z.object({
  id: idSchema,
  recovery_id: z
    .string()
    .regex(/^rcv_[a-f0-9]{32}$/, 'must be a recovery id (rcv_...)')
    .describe('The id the recover call answered'),
});

/** Resend and recovery (docs/decisions/0043). */
export function resendRoutes(resends: Resends) {
  return [
    route({
      method: 'post',
      path: `${WEBHOOKS_PATH}:id/responses/:response_id/resend/`,
      summary:
        "Resend a recorded Webhook Response: the same body byte for byte and the same webhook-id header, a fresh timestamp and a signature with the webhook's current secret. A new response (resend_of) that retries and counts in the rate limit and the retention like any fire",
      access,
      params: responseParams,
      responses: {
        202: { description: 'The new response that carries the resend', schema: webhookTriggerResultSchema },
        ...problems(400, 401, 403, 404),
        409: problem(
          'The webhook is disabled or its Service was deleted (the reason is named), or the response is still being delivered',
        ),
      },
      handler: async ({ principal, params, log }) => {
        const result = await resends.resend(principal, params.id, params.response_id);
        log.info(
          { webhook_id: params.id, resend_of: params.response_id, response_id: result.response_id },
          'webhook response resent',
        );
        return { status: 202, body: result };
      },
    }),
    route({
      method: 'post',
      path: `${WEBHOOKS_PATH}:id/recover/`,
      summary:
        'Resend every FAILED fire of the webhook created since a time (and until a time, default now), oldest first, as fast as webhook_rate_limit_per_minute allows. One recovery runs per webhook; the same window asked again while it runs answers the same recovery',
      access,
      params: idParams,
      body: webhookRecoverSchema,
      responses: {
        202: {
          description: 'The recovery: how many fires it resends (total) and its id to read progress',
          schema: webhookRecoveryViewSchema,
        },
        ...problems(400, 401, 403, 404),
        409: problem(
          'The webhook is disabled or its Service was deleted, or another recovery (another window) is running for it',
        ),
      },
      handler: async ({ principal, params, body, log }) => {
        const { created, view } = await resends.recover(principal, params.id, body);
        if (created)
          log.info(
            { webhook_id: params.id, recovery_id: view.id, total: view.total },
            'webhook recovery started',
          );
        return { status: 202, body: view };
      },
    }),
    route({
      method: 'get',
      path: `${WEBHOOKS_PATH}:id/recoveries/:recovery_id/`,
      summary: "A recovery's progress",
      access,
      params: recoveryParams,
      responses: {
        200: { description: 'The recovery', schema: webhookRecoveryViewSchema },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ principal, params }) => ({
        body: await resends.recovery(principal, params.id, params.recovery_id),
      }),
    }),
  ];
}
