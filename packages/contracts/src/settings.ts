import Ajv from 'ajv';
import { z } from 'zod';
import { changeInstanceStateSchema } from './events';
import { buildGenUiCatalogSchema, JSON_SCHEMA_DRAFT_07, type JsonSchema } from './gen-ui';

/**
 * General Settings (spec 2.8): groups and field names exactly as the spec writes them, under the
 * group keys of DESIGN section 9. Each field is declared once, as a zod type without a default,
 * with its default beside it; from that come the read schema (every field, defaults filled), the
 * PATCH schema (strict and partial, nothing filled in) and the view schema (what GET answers).
 */

// ---- field types -------------------------------------------------------------------------

const MAX_TEXT = 1000;
const bool = (description: string) => z.boolean().describe(description);
const text = (description: string, max = MAX_TEXT) =>
  z.string().max(max, `must be at most ${max} characters`).describe(description);
const secret = (description: string) =>
  z.string().max(4096, 'must be at most 4096 characters').describe(`${description} (secret)`);
const optionalHttpUrl = (description: string) =>
  z
    .union(
      [z.literal(''), z.url({ protocol: /^https?$/, error: 'must be an http(s) URL or empty' }).max(2048)],
      {
        error: 'must be an http(s) URL or empty',
      },
    )
    .describe(description);
const perMinute = (description: string) =>
  z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(100_000, 'must be at most 100000')
    .describe(description);

/** One or more LDAP server URIs separated by spaces, as LDAP client libraries accept them. */
const LDAP_URIS = /^ldaps?:\/\/[^\s/?#]+(\/[^\s]*)?(\s+ldaps?:\/\/[^\s/?#]+(\/[^\s]*)?)*$/;
/** A distinguished name: attribute=value pairs separated by commas (escaped commas allowed). */
const DN = /^[A-Za-z][A-Za-z0-9-]*=(?:[^,\\]|\\.)+(?:,\s*[A-Za-z][A-Za-z0-9-]*=(?:[^,\\]|\\.)+)*$/;
/** A host name or an IPv4 address (RFC 1123 labels), or an IPv6 address. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$|^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$/;

/** A string that is empty or matches `pattern`; one clear message instead of a raw regex. */
const emptyOr = (pattern: RegExp, max: number, message: string) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((value) => value === '' || pattern.test(value), { error: message });
const dn = (description: string) =>
  emptyOr(DN, MAX_TEXT, 'must be a DN such as ou=people,dc=example,dc=com, or empty').describe(description);
const stateFilter = (description: string) =>
  z
    .array(changeInstanceStateSchema)
    .refine((states) => new Set(states).size === states.length, 'must not list a state twice')
    .describe(description);

export const GEN_UI_CATALOG_SCHEMA_MAX_BYTES = 256 * 1024;

/** The problems that make a value not a usable draft-07 JSON Schema (empty when it is one). */
export function jsonSchemaProblems(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return ['must be a JSON Schema object'];
  const declared = (schema as { $schema?: unknown }).$schema;
  if (
    declared !== undefined &&
    declared !== JSON_SCHEMA_DRAFT_07 &&
    declared !== JSON_SCHEMA_DRAFT_07.slice(0, -1)
  ) {
    return [`$schema must be ${JSON_SCHEMA_DRAFT_07} (draft-07) or absent`];
  }
  // A fresh instance per check: compiled schemas are cached per instance, and a user's `$id`
  // must not collide with an earlier one. Unknown keywords are legal JSON Schema (strict: false).
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  if (!ajv.validateSchema(schema)) {
    return (ajv.errors ?? []).map(
      (error) => `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}`,
    );
  }
  try {
    ajv.compile(schema); // unresolvable $refs and invalid regular expressions only show here
    return [];
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
}

const catalogSchemaValue = z.record(z.string(), z.unknown()).nullable();
const catalogSchemaWrite = catalogSchemaValue.superRefine((value, ctx) => {
  if (value === null) return;
  if (JSON.stringify(value).length > GEN_UI_CATALOG_SCHEMA_MAX_BYTES) {
    ctx.addIssue({
      code: 'custom',
      message: `must be at most ${GEN_UI_CATALOG_SCHEMA_MAX_BYTES} bytes of JSON`,
    });
    return;
  }
  for (const problem of jsonSchemaProblems(value))
    ctx.addIssue({ code: 'custom', message: `is not a valid JSON Schema: ${problem}` });
});

// ---- groups ------------------------------------------------------------------------------

type Fields = Record<string, z.ZodType>;
type Values<F extends Fields> = { [K in keyof F]: z.output<F[K]> };

interface GroupDefinition<F extends Fields> {
  label: string;
  fields: F;
  defaults: Values<F>;
  /** Fields whose PATCH type differs from the read type (stricter checks on write). */
  writeTypes?: Partial<Record<keyof F, z.ZodType>>;
}
const defineGroup = <F extends Fields>(definition: GroupDefinition<F>) => definition;

const groups = {
  ldap: defineGroup({
    label: 'LDAP',
    fields: {
      ENABLED: bool('Users may sign in with LDAP'),
      SERVER_URI: emptyOr(
        LDAP_URIS,
        MAX_TEXT,
        'must be ldap:// or ldaps:// URIs separated by spaces, or empty',
      ).describe('Connection string: ldap:// or ldaps:// URIs separated by spaces'),
      BIND_DN: dn('DN the service binds as'),
      BIND_PASSWORD: secret('Password of BIND_DN'),
      USER_SEARCH_BASE_DN: dn('Base DN of the user search'),
      GROUP_SEARCH_QUERY_BASE_DN: dn('Base DN of the group search'),
    },
    defaults: {
      ENABLED: false,
      SERVER_URI: '',
      BIND_DN: '',
      BIND_PASSWORD: '',
      USER_SEARCH_BASE_DN: '',
      GROUP_SEARCH_QUERY_BASE_DN: '',
    },
  }),
  smtp: defineGroup({
    label: 'SMTP',
    fields: {
      ENABLED: bool('Mail is sent through SMTP'),
      EMAIL_HOST: emptyOr(HOST, 253, 'must be a host name or IP address, or empty').describe(
        'SMTP server host',
      ),
      EMAIL_PORT: z
        .number()
        .int('must be a whole number')
        .min(1, 'must be at least 1')
        .max(65535, 'must be at most 65535')
        .describe('SMTP server port'),
      EMAIL_HOST_USER: text('SMTP user name', 255),
      EMAIL_HOST_PASSWORD: secret('SMTP password'),
      EMAIL_USE_TLS: bool('Use STARTTLS'),
    },
    defaults: {
      ENABLED: false,
      EMAIL_HOST: '',
      EMAIL_PORT: 587,
      EMAIL_HOST_USER: '',
      EMAIL_HOST_PASSWORD: '',
      EMAIL_USE_TLS: true,
    },
  }),
  feedback: defineGroup({
    label: 'Feedback',
    fields: {
      ENABLED: bool('Show the feedback link'),
      feedback_link: optionalHttpUrl('Where the feedback link points'),
    },
    defaults: { ENABLED: false, feedback_link: '' },
  }),
  oauth: defineGroup({
    label: 'Identity-provider OAuth',
    fields: {
      ENABLED: bool('Users may sign in through the identity provider (single sign-on)'),
      CLIENT_ID: secret('OAuth client id'),
      CLIENT_SECRET: secret('OAuth client secret, write-only'),
    },
    defaults: { ENABLED: false, CLIENT_ID: '', CLIENT_SECRET: '' },
  }),
  currency: defineGroup({
    label: 'Currency',
    fields: {
      ENABLED: bool('Show costs in the chosen currency'),
      currency: z
        .enum(['USD', 'EUR', 'GBP'], { error: 'must be one of USD, EUR, GBP' })
        .describe('Displayed currency'),
    },
    defaults: { ENABLED: true, currency: 'USD' },
  }),
  charges: defineGroup({
    label: 'Charges Settings',
    fields: {
      ENABLED: bool('Show charges'),
      hide_for_serviceowners: bool('Hide charges from service owners'),
      hide_for_consumers: bool('Hide charges from consumers'),
      only_admins_can_see: bool('Only administrators see charges'),
    },
    defaults: {
      ENABLED: false,
      hide_for_serviceowners: false,
      hide_for_consumers: false,
      only_admins_can_see: false,
    },
  }),
  submission_builder: defineGroup({
    label: 'Submission Builder',
    fields: {
      show_submission_builder: bool('Show the submission builder'),
      enable_submit_functionality: bool('Allow submitting from the builder'),
      default_allow_submit_submission_builder: bool('New services allow builder submissions by default'),
    },
    defaults: {
      show_submission_builder: true,
      enable_submit_functionality: true,
      default_allow_submit_submission_builder: true,
    },
  }),
  service_creator: defineGroup({
    label: 'Service Creator',
    fields: {
      show_create_service_option: bool('Show the create-service option'),
      allow_service_creation: bool('Allow creating services'),
      default_allow_service_creation: bool('New users may create services by default'),
    },
    defaults: {
      show_create_service_option: true,
      allow_service_creation: true,
      default_allow_service_creation: true,
    },
  }),
  ai_integration: defineGroup({
    label: 'AI Integration',
    fields: {
      show_ai_validator: bool('The Change Instance Validator is enabled'),
      show_ai_processor: bool('AI processors are enabled'),
      show_ai_integration: bool('Derived: true when any AI feature is enabled; never written'),
      generative_ui_catalog_schema: catalogSchemaValue.describe(
        'Generative UI Catalog Schema (draft-07 JSON Schema); null until generated, meaning the registry default applies',
      ),
    },
    defaults: {
      show_ai_validator: false,
      show_ai_processor: false,
      show_ai_integration: false,
      generative_ui_catalog_schema: null,
    },
    writeTypes: { generative_ui_catalog_schema: catalogSchemaWrite },
  }),
  gui_table: defineGroup({
    label: 'GUI Table Settings',
    fields: {
      ENABLED: bool('Tables refresh automatically'),
      table_refresh_interval: z
        .number()
        .int('must be a whole number')
        .min(5, 'must be at least 5 seconds')
        .max(3600, 'must be at most 3600 seconds')
        .describe('Auto-refresh interval in seconds'),
      default_filter_states_for_consumers: stateFilter(
        'Change Instance states pre-selected for consumers; empty means all',
      ),
      default_filter_states_for_serviceowners: stateFilter(
        'Change Instance states pre-selected for service owners; empty means all',
      ),
    },
    defaults: {
      ENABLED: true,
      table_refresh_interval: 30,
      default_filter_states_for_consumers: [],
      default_filter_states_for_serviceowners: ['PENDING'],
    },
  }),
  global_banner: defineGroup({
    label: 'Global Banner',
    fields: { ENABLED: bool('Show the banner'), message: text('Text shown to all users', 2000) },
    defaults: { ENABLED: false, message: '' },
  }),
  external_api: defineGroup({
    label: 'External API Settings',
    fields: {
      healthcheck_rate_limit_per_minute: perMinute('Healthcheck requests per minute per client'),
      healthcheck_response_rate_limit: perMinute('Healthcheck response reads per minute per client'),
      webhook_rate_limit_per_minute: perMinute(
        'Webhook fires per minute per webhook; later fires are delayed, never dropped',
      ),
      webhook_response_rate_limit: perMinute('Webhook response reads per minute per client'),
      webhook_response_retention: z
        .number()
        .int('must be a whole number')
        .min(1, 'must be at least 1')
        .max(100_000, 'must be at most 100000')
        .describe('Webhook responses kept per webhook (the newest)'),
    },
    defaults: {
      healthcheck_rate_limit_per_minute: 60,
      healthcheck_response_rate_limit: 60,
      webhook_rate_limit_per_minute: 60,
      webhook_response_rate_limit: 120,
      webhook_response_retention: 100,
    },
  }),
};

type Groups = typeof groups;
export type SettingsGroup = keyof Groups;
export const SETTINGS_GROUPS = Object.keys(groups) as SettingsGroup[];

/** The spec's name of each group, for messages and documentation. */
export const SETTINGS_GROUP_LABELS = Object.fromEntries(
  SETTINGS_GROUPS.map((g) => [g, groups[g].label]),
) as Record<SettingsGroup, string>;

type ReadShape<F extends Fields> = { [K in keyof F]: z.ZodDefault<F[K]> };
type PatchShape<F extends Fields> = { [K in keyof F]: z.ZodOptional<F[K]> };

function readSchema<F extends Fields>(definition: GroupDefinition<F>) {
  const shape = Object.fromEntries(
    Object.entries(definition.fields).map(([name, type]) => [
      name,
      type.default(definition.defaults[name] as never),
    ]),
  );
  return z.strictObject(shape) as unknown as z.ZodObject<ReadShape<F>, z.core.$strict>;
}

type SchemasOf<G extends Record<string, GroupDefinition<Fields>>> = {
  [K in keyof G]: ReturnType<typeof readSchema<G[K]['fields']>>;
};

/** Per group: every field with its default (what a reader of the settings gets). */
export const settingsGroupSchemas = Object.fromEntries(
  SETTINGS_GROUPS.map((g) => [g, readSchema(groups[g] as GroupDefinition<Fields>)]),
) as unknown as SchemasOf<Groups>;

export const generalSettingsSchema = z.strictObject(settingsGroupSchemas);
export type GeneralSettings = z.infer<typeof generalSettingsSchema>;

/** Secret fields per group: encrypted at rest, masked in responses, redacted from logs. */
export const SETTINGS_SECRET_FIELDS: Partial<Record<SettingsGroup, readonly string[]>> = {
  ldap: ['BIND_PASSWORD'],
  smtp: ['EMAIL_HOST_PASSWORD'],
  oauth: ['CLIENT_ID', 'CLIENT_SECRET'],
};
/** Secret fields that are never returned, not even masked. */
export const SETTINGS_WRITE_ONLY_FIELDS: Partial<Record<SettingsGroup, readonly string[]>> = {
  oauth: ['CLIENT_SECRET'],
};
/** Fields computed from others; a PATCH that names one is refused. */
export const SETTINGS_DERIVED_FIELDS: Partial<Record<SettingsGroup, readonly string[]>> = {
  ai_integration: ['show_ai_integration'],
};
/** Fields holding user JSON, stored as JSON text (DESIGN section 2). */
export const SETTINGS_JSON_FIELDS: Partial<Record<SettingsGroup, readonly string[]>> = {
  ai_integration: ['generative_ui_catalog_schema'],
};

export function isSecretSetting(group: SettingsGroup, field: string): boolean {
  return SETTINGS_SECRET_FIELDS[group]?.includes(field) ?? false;
}

function patchSchema<F extends Fields>(group: SettingsGroup, definition: GroupDefinition<F>) {
  const derived = new Set(SETTINGS_DERIVED_FIELDS[group] ?? []);
  const shape = Object.fromEntries(
    Object.entries(definition.fields).map(([name, type]) => [
      name,
      derived.has(name)
        ? z
            .never({
              error: `${name} is derived (true when any AI feature is enabled) and cannot be written`,
            })
            .optional()
        : (definition.writeTypes?.[name] ?? type).optional(),
    ]),
  );
  return z.strictObject(shape) as unknown as z.ZodObject<PatchShape<F>, z.core.$strict>;
}

type PatchSchemasOf<G extends Record<string, GroupDefinition<Fields>>> = {
  [K in keyof G]: ReturnType<typeof patchSchema<G[K]['fields']>>;
};

/** Per group: the fields a PATCH may send, all optional, no defaults filled in. */
export const settingsPatchGroupSchemas = Object.fromEntries(
  SETTINGS_GROUPS.map((g) => [g, patchSchema(g, groups[g] as GroupDefinition<Fields>)]),
) as unknown as PatchSchemasOf<Groups>;

/**
 * Body of `PATCH /v1/core/general_settings/`: any subset of groups and, within each, any subset
 * of fields. Unknown groups and fields are refused by name.
 */
export const generalSettingsPatchSchema = z.strictObject(
  Object.fromEntries(SETTINGS_GROUPS.map((g) => [g, settingsPatchGroupSchemas[g].optional()])) as {
    [K in SettingsGroup]: z.ZodOptional<PatchSchemasOf<Groups>[K]>;
  },
);
export type GeneralSettingsPatch = z.infer<typeof generalSettingsPatchSchema>;

/** What `GET /v1/core/general_settings/` answers: secrets masked, write-only fields absent. */
export const generalSettingsViewSchema = z.strictObject({
  ...settingsGroupSchemas,
  oauth: settingsGroupSchemas.oauth.omit({ CLIENT_SECRET: true }),
});
export type GeneralSettingsView = z.infer<typeof generalSettingsViewSchema>;

/** The default of one field (a fresh copy, so callers may mutate arrays). */
export function settingsFieldDefault(group: SettingsGroup, field: string): unknown {
  const value = (groups[group].defaults as Record<string, unknown>)[field];
  return structuredClone(value);
}

export function settingsFieldNames(group: SettingsGroup): string[] {
  return Object.keys(groups[group].fields);
}

/** `show_ai_integration` is true when any AI feature is enabled; it is never stored as written. */
export function deriveAiIntegration<S extends GeneralSettings | GeneralSettingsView>(settings: S): S {
  const ai = settings.ai_integration;
  return {
    ...settings,
    ai_integration: { ...ai, show_ai_integration: ai.show_ai_validator || ai.show_ai_processor },
  };
}

export function defaultGeneralSettings(): GeneralSettings {
  return deriveAiIntegration(
    generalSettingsSchema.parse(Object.fromEntries(SETTINGS_GROUPS.map((g) => [g, {}]))),
  );
}

/** The catalog schema in force: the administrator's, or the registry's until one is generated. */
export function effectiveGenUiCatalogSchema(settings: Pick<GeneralSettings, 'ai_integration'>): JsonSchema {
  return settings.ai_integration.generative_ui_catalog_schema ?? buildGenUiCatalogSchema();
}
