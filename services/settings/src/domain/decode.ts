import {
  deriveAiIntegration,
  SETTINGS_GROUPS,
  SETTINGS_JSON_FIELDS,
  isSecretSetting,
  settingsFieldDefault,
  settingsFieldNames,
  settingsGroupSchemas,
  type GeneralSettings,
  type SettingsGroup,
} from '@pack/contracts';
import type { SecretCodec, StoredGroups } from './model';

export interface DecodedSettings {
  /** Every field, defaults filled in, secrets in plaintext (never leaves the service). */
  settings: GeneralSettings;
  /** `group.field` of secrets that are stored but cannot be decrypted. */
  unreadable: Set<string>;
  /** `group.field` of stored values that no longer pass their schema (default used instead). */
  invalid: Set<string>;
}

export function isJsonSetting(group: SettingsGroup, field: string): boolean {
  return SETTINGS_JSON_FIELDS[group]?.includes(field) ?? false;
}

/** The value a field has in the document model, from its stored form. */
function decodeField(
  group: SettingsGroup,
  field: string,
  stored: unknown,
  codec: SecretCodec,
): { value: unknown; unreadable?: true } {
  if (isSecretSetting(group, field)) {
    if (typeof stored !== 'string' || stored === '') return { value: '' };
    const plaintext = codec.open(group, field, stored);
    return plaintext === null ? { value: '', unreadable: true } : { value: plaintext };
  }
  if (isJsonSetting(group, field))
    return { value: typeof stored === 'string' ? (JSON.parse(stored) as unknown) : null };
  return { value: stored };
}

/** Merges the stored overrides over the defaults; bad stored values fall back to defaults. */
export function decodeSettings(stored: StoredGroups, codec: SecretCodec): DecodedSettings {
  const unreadable = new Set<string>();
  const invalid = new Set<string>();
  const settings = {} as Record<SettingsGroup, Record<string, unknown>>;
  for (const group of SETTINGS_GROUPS) {
    const shape = settingsGroupSchemas[group].shape as Record<
      string,
      { safeParse(value: unknown): { success: boolean; data?: unknown } }
    >;
    const values: Record<string, unknown> = {};
    for (const field of settingsFieldNames(group)) {
      const overrides = stored[group] ?? {};
      if (!Object.hasOwn(overrides, field)) {
        values[field] = settingsFieldDefault(group, field);
        continue;
      }
      try {
        const decoded = decodeField(group, field, overrides[field], codec);
        if (decoded.unreadable) unreadable.add(`${group}.${field}`);
        const checked = shape[field]!.safeParse(decoded.value);
        if (checked.success) values[field] = checked.data;
        else throw new Error('stored value fails its schema');
      } catch {
        invalid.add(`${group}.${field}`);
        values[field] = settingsFieldDefault(group, field);
      }
    }
    settings[group] = values;
  }
  return { settings: deriveAiIntegration(settings as GeneralSettings), unreadable, invalid };
}

/** The stored form of a field's new value. */
export function encodeField(
  group: SettingsGroup,
  field: string,
  value: unknown,
  codec: SecretCodec,
): unknown {
  if (isSecretSetting(group, field)) return value === '' ? '' : codec.seal(group, field, value as string);
  if (isJsonSetting(group, field)) return value === null ? null : JSON.stringify(value);
  return value;
}
