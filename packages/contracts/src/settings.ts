import { z } from 'zod';
import { changeInstanceStateSchema } from './events';

/**
 * General Settings (spec 2.8): groups and field names exactly as the spec writes them, under the
 * group keys of the design brief. Each field carries its default; `show_ai_integration` is derived.
 */
const bool = (value: boolean) => z.boolean().default(value);
const text = (max = 1000) => z.string().max(max).default('');
const secret = () => z.string().max(4096).default('');
const optionalUrl = () =>
  z
    .union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL or empty' })])
    .default('');
const rate = (value: number) => z.number().int().min(1).max(100_000).default(value);

export const settingsGroupSchemas = {
  ldap: z.strictObject({
    ENABLED: bool(false),
    SERVER_URI: z
      .union([z.literal(''), z.string().regex(/^ldaps?:\/\/[^\s]+$/, 'must be an ldap:// or ldaps:// URI')])
      .default(''),
    BIND_DN: text(),
    BIND_PASSWORD: secret(),
    USER_SEARCH_BASE_DN: text(),
    GROUP_SEARCH_QUERY_BASE_DN: text(),
  }),
  smtp: z.strictObject({
    ENABLED: bool(false),
    EMAIL_HOST: text(255),
    EMAIL_PORT: z.number().int().min(1).max(65535).default(587),
    EMAIL_HOST_USER: text(255),
    EMAIL_HOST_PASSWORD: secret(),
    EMAIL_USE_TLS: bool(true),
  }),
  feedback: z.strictObject({ ENABLED: bool(false), feedback_link: optionalUrl() }),
  oauth: z.strictObject({ ENABLED: bool(false), CLIENT_ID: secret(), CLIENT_SECRET: secret() }),
  currency: z.strictObject({ ENABLED: bool(true), currency: z.enum(['USD', 'EUR', 'GBP']).default('USD') }),
  charges: z.strictObject({
    ENABLED: bool(false),
    hide_for_serviceowners: bool(false),
    hide_for_consumers: bool(false),
    only_admins_can_see: bool(false),
  }),
  submission_builder: z.strictObject({
    show_submission_builder: bool(true),
    enable_submit_functionality: bool(true),
    default_allow_submit_submission_builder: bool(true),
  }),
  service_creator: z.strictObject({
    show_create_service_option: bool(true),
    allow_service_creation: bool(true),
    default_allow_service_creation: bool(true),
  }),
  ai_integration: z.strictObject({
    show_ai_validator: bool(false),
    show_ai_processor: bool(false),
    show_ai_integration: bool(false),
    generative_ui_catalog_schema: z.record(z.string(), z.unknown()).nullable().default(null),
  }),
  gui_table: z.strictObject({
    ENABLED: bool(true),
    table_refresh_interval: z.number().int().min(5).max(3600).default(30),
    default_filter_states_for_consumers: z.array(changeInstanceStateSchema).default([]),
    default_filter_states_for_serviceowners: z.array(changeInstanceStateSchema).default(['PENDING']),
  }),
  global_banner: z.strictObject({ ENABLED: bool(false), message: text(2000) }),
  external_api: z.strictObject({
    healthcheck_rate_limit_per_minute: rate(60),
    healthcheck_response_rate_limit: rate(60),
    webhook_rate_limit_per_minute: rate(60),
    webhook_response_rate_limit: rate(120),
    webhook_response_retention: z.number().int().min(1).max(100_000).default(100),
  }),
} as const;

export type SettingsGroup = keyof typeof settingsGroupSchemas;
export const SETTINGS_GROUPS = Object.keys(settingsGroupSchemas) as SettingsGroup[];

export const generalSettingsSchema = z.strictObject(settingsGroupSchemas);
export type GeneralSettings = z.infer<typeof generalSettingsSchema>;

/** Secret fields per group; CLIENT_SECRET is also write-only (never returned). */
export const SETTINGS_SECRET_FIELDS: Partial<Record<SettingsGroup, readonly string[]>> = {
  ldap: ['BIND_PASSWORD'],
  smtp: ['EMAIL_HOST_PASSWORD'],
  oauth: ['CLIENT_ID', 'CLIENT_SECRET'],
};
export const SETTINGS_WRITE_ONLY_FIELDS: Partial<Record<SettingsGroup, readonly string[]>> = {
  oauth: ['CLIENT_SECRET'],
};

/** `show_ai_integration` is true when any AI feature is enabled; it is never stored as written. */
export function deriveAiIntegration(settings: GeneralSettings): GeneralSettings {
  const ai = settings.ai_integration;
  return {
    ...settings,
    ai_integration: { ...ai, show_ai_integration: ai.show_ai_validator || ai.show_ai_processor },
  };
}

export function defaultGeneralSettings(): GeneralSettings {
  return deriveAiIntegration(generalSettingsSchema.parse(Object.fromEntries(SETTINGS_GROUPS.map((g) => [g, {}]))));
}
