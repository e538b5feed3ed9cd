import { z } from 'zod';
import { buildGenUiCatalogSchema, type JsonSchema } from './gen-ui';
import { groups, type Fields, type GroupDefinition } from './settings-groups';

export { GEN_UI_CATALOG_SCHEMA_MAX_BYTES, jsonSchemaProblems, serverUrlProblem } from './settings-fields';
export { IDENTITY_PROVIDER_URL_RULE } from './settings-groups';

/**
 * General Settings (spec 2.8): groups and field names exactly as the spec writes them, under the
 * group keys of DESIGN section 9. Each field is declared once, as a zod type without a default,
 * with its default beside it; from that come the read schema (every field, defaults filled), the
 * PATCH schema (strict and partial, nothing filled in) and the view schema (what GET answers).
 */

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
