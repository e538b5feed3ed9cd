import { z } from 'zod';
import { changeInstanceStateSchema } from './events';
import { headerValueText } from './header-value';
import { plainHttpUrl } from './http-url';
import { nonBlankText, storedText } from './text';

/** Webhooks (spec 2.6, 2.7, 3.2, 4.1; DESIGN section 8). */
export const WEBHOOKS_PATH = '/v1/external/serviceowner/webhooks/';
/** The Webhook Responses of all the caller's webhooks together. */
export const WEBHOOK_RESPONSES_PATH = '/v1/external/serviceowner/webhook_responses/';

/** Longest trigger_wait_time / trigger_cooling_time: one day (DESIGN section 8). */
export const MAX_TRIGGER_SECONDS = 86_400;

const seconds = (what: string) =>
  z
    .number()
    .min(0, 'must be 0 or more seconds')
    .max(MAX_TRIGGER_SECONDS, `must be at most ${MAX_TRIGGER_SECONDS} seconds`)
    .describe(`${what}, in seconds (0..${MAX_TRIGGER_SECONDS}); 0: off`);

// The pattern refuses CR, LF and tab (the URL parser would drop them silently, so the stored text
// would not be the URL that is called), as every control character and space.
/** Service owners set webhook targets: an address inside the platform's network is refused by default. */
export const WEBHOOK_TARGET_RULE =
  'Webhook targets must be public addresses: private-network, loopback, link-local and cloud metadata addresses are refused unless PACK_ALLOWED_TARGET_CIDRS of the webhook-dispatcher service names their range. A host name is checked again at every delivery';
const targetUrl = plainHttpUrl(`http(s) URL that receives the POST of spec 4.1. ${WEBHOOK_TARGET_RULE}`);

const authorization = headerValueText()
  .max(4096)
  .describe(
    'Sent as the Authorization header (secret: encrypted at rest, masked in responses; no CR, LF or NUL). Must be sent again with a new target_url',
  );

/** Fields of the full form of spec 2.6. */
const webhookFields = {
  name: nonBlankText(200),
  description: storedText().max(2000),
  service: z.number().int().positive().describe('Id of a Service the caller owns'),
  target_url: targetUrl,
  authorization,
  change_instance_state: changeInstanceStateSchema
    .nullable()
    .describe('The Change Instance state that fires the webhook; null: fire at submission'),
  trigger_wait_time: seconds('Triggers within this window merge into one request at its end'),
  trigger_cooling_time: seconds('Triggers within this interval after a fire are suppressed'),
};

/**
 * `POST .../webhooks/`: the full form of spec 2.6, or the short one without
 * change_instance_state, trigger_wait_time and trigger_cooling_time (then null, 0 and 0).
 */
export const webhookCreateSchema = z.strictObject({
  ...webhookFields,
  description: webhookFields.description.default(''),
  authorization: webhookFields.authorization.default(''),
  change_instance_state: webhookFields.change_instance_state.default(null),
  trigger_wait_time: webhookFields.trigger_wait_time.default(0),
  trigger_cooling_time: webhookFields.trigger_cooling_time.default(0),
  enabled: z.boolean().default(true),
});
export type WebhookCreate = z.infer<typeof webhookCreateSchema>;

/** `PATCH .../webhooks/<id>/`: any subset; a masked authorization sent back keeps the stored one. */
export const webhookPatchSchema = z.strictObject({
  name: webhookFields.name.optional(),
  description: webhookFields.description.optional(),
  target_url: targetUrl.optional(),
  authorization: authorization.optional(),
  change_instance_state: webhookFields.change_instance_state.optional(),
  trigger_wait_time: webhookFields.trigger_wait_time.optional(),
  trigger_cooling_time: webhookFields.trigger_cooling_time.optional(),
  enabled: z.boolean().optional(),
});
export type WebhookPatch = z.infer<typeof webhookPatchSchema>;

export const webhookViewSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  service: z.number().int(),
  owner: z.object({ id: z.number().int(), name: z.string() }),
  target_url: z.string(),
  authorization: z.string().describe('Masked: at most the last four characters'),
  change_instance_state: changeInstanceStateSchema.nullable(),
  trigger_wait_time: z.number(),
  trigger_cooling_time: z.number(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable().describe('Why the dispatcher disabled it (a 410 from the target)'),
  secret: z
    .string()
    .describe('Signing secret (whsec_...): in full only when created or rotated, masked otherwise'),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookView = z.infer<typeof webhookViewSchema>;

/** `POST .../webhooks/<id>/trigger/`: a manual fire, optionally about one Change Instance. */
export const webhookTriggerSchema = z.strictObject({
  change_instance_id: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("A Change Instance of the webhook's Service; its current state goes in the body"),
});

export const FIRE_MODES = ['manual', 'submission', 'state_change'] as const;
export type FireMode = (typeof FIRE_MODES)[number];

export const webhookTriggerResultSchema = z.object({
  outcome: z
    .enum(['scheduled', 'merged', 'suppressed'])
    .describe('scheduled: a new response; merged: joined an open wait window; suppressed: cooling time'),
  response_id: z.number().int().nullable().describe('The Webhook Response that carries this trigger'),
});
export type WebhookTriggerResult = z.infer<typeof webhookTriggerResultSchema>;

export const WEBHOOK_RESPONSE_STATES = ['SCHEDULED', 'WAITING_FOR_RESPONSE', 'OK', 'FAILED'] as const;
export const webhookResponseStateSchema = z.enum(WEBHOOK_RESPONSE_STATES);
export type WebhookResponseState = z.infer<typeof webhookResponseStateSchema>;

/**
 * How a webhook's deliveries are going, as the list shows it: an owner spots a target that has
 * failed for a day without opening every webhook. Counted over the responses kept (the newest
 * `webhook_response_retention`).
 */
export const webhookHealthSchema = z.object({
  last_state: webhookResponseStateSchema
    .nullable()
    .describe('State of the newest Webhook Response; null: never fired'),
  last_at: z.string().nullable().describe('When the newest Webhook Response last changed; null: never fired'),
  failures_in_row: z
    .number()
    .int()
    .describe('FAILED responses after the newest OK one (all FAILED ones when none is OK); 0: not failing'),
  failing_since: z
    .string()
    .nullable()
    .describe('When the first of those failures was due; null when failures_in_row is 0'),
});
export type WebhookHealth = z.infer<typeof webhookHealthSchema>;

/** A webhook in the list: the webhook, its Service's name and its health. */
export const webhookListItemSchema = webhookViewSchema.extend({
  service_name: z
    .string()
    .nullable()
    .describe("The Service's name; null when the dispatcher does not know it"),
  health: webhookHealthSchema,
});
export type WebhookListItem = z.infer<typeof webhookListItemSchema>;

/** The body of spec 4.1, exactly. */
export const webhookBodySchema = z.object({
  id: z.number().int(),
  name: z.string(),
  owner: z.object({ id: z.number().int(), name: z.string() }),
  state: z.string(),
});
export type WebhookBody = z.infer<typeof webhookBodySchema>;

/** Longest response body kept on a Webhook Response, in characters. */
export const RESPONSE_BODY_LIMIT = 4096;

export const webhookResponseViewSchema = z.object({
  id: z.number().int().describe('Numbered per webhook, increasing'),
  webhook: z.number().int(),
  state: webhookResponseStateSchema,
  mode: z.enum(FIRE_MODES),
  change_instance_id: z.number().int().nullable(),
  message_id: z
    .string()
    .describe(
      "This response's own id; the webhook-id header of its attempts, except for a resend (see resend_of)",
    ),
  resend_of: z
    .object({
      id: z.number().int().describe('The response this one resends'),
      message_id: z
        .string()
        .describe(
          "The webhook-id header this resend is sent with: the first fire's, for receivers to deduplicate",
        ),
      recovery_id: z.string().nullable().describe('The recovery that made it; null for a single resend'),
    })
    .nullable()
    .describe('Set when this response is a resend of another; null for a fire'),
  request_body: webhookBodySchema,
  status_code: z.number().int().nullable(),
  response_body: z
    .string()
    .nullable()
    .describe(
      `The target's answer, cut to ${RESPONSE_BODY_LIMIT} characters; null when none came (the request was never sent, refused or not answered)`,
    ),
  response_truncated: z.boolean(),
  error: z
    .string()
    .nullable()
    .describe(
      'Why there is no answer of the target: the fire was never sent (the webhook disabled or deleted), its target refused, or no reply came; null when the target answered',
    ),
  attempts: z.array(
    z.object({
      at: z.string(),
      status_code: z.number().int().nullable(),
      error: z.string().nullable(),
      duration_ms: z.number().int(),
    }),
  ),
  scheduled_for: z.string().describe('When the request is (or was) due'),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookResponseView = z.infer<typeof webhookResponseViewSchema>;

/** `GET .../responses/` filters. */
export const webhookResponseFilterSchema = z.object({
  state: webhookResponseStateSchema.optional().describe('Only responses in this state'),
  resend: z
    .enum(['true', 'false'])
    .transform((value) => value === 'true')
    .optional()
    .describe('true: only resends; false: only first fires'),
});

/** `POST .../webhooks/<id>/recover/`: every FAILED fire of the webhook created in the window. */
export const webhookRecoverSchema = z
  .strictObject({
    since: z.iso.datetime({ offset: true }).describe('Fires created at or after this time (ISO 8601)'),
    until: z.iso
      .datetime({ offset: true })
      .nullable()
      .default(null)
      .describe('Fires created at or before this time, not before since (default: the time of the call)'),
  })
  .refine((value) => value.until === null || Date.parse(value.until) >= Date.parse(value.since), {
    path: ['until'],
    message: 'must not be before since',
  });
export type WebhookRecover = z.infer<typeof webhookRecoverSchema>;

export const WEBHOOK_RECOVERY_STATES = ['RUNNING', 'DONE', 'CANCELLED'] as const;

export const webhookRecoveryViewSchema = z.object({
  id: z.string().describe('The recovery id (rcv_...)'),
  webhook: z.number().int(),
  state: z
    .enum(WEBHOOK_RECOVERY_STATES)
    .describe(
      'RUNNING: resends being queued; DONE: all queued; CANCELLED: the webhook was disabled or deleted',
    ),
  since: z.string(),
  until: z.string().describe('The end of the window (the time of the call when none was given)'),
  total: z.number().int().describe('FAILED fires in the window, to be resent'),
  resent: z.number().int().describe('Resends queued so far (each a new Webhook Response)'),
  reason: z.string().nullable().describe('Why a recovery was cancelled'),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type WebhookRecoveryView = z.infer<typeof webhookRecoveryViewSchema>;
