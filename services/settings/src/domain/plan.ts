import { isMaskedSecret } from '@pack/secrets';
import {
  isSecretSetting,
  SETTINGS_GROUPS,
  type GeneralSettingsPatch,
  type SettingsGroup,
} from '@pack/contracts';
import { ValidationError, type FieldErrors } from '@pack/errors';
import { decodeSettings, encodeField, isJsonSetting, type DecodedSettings } from './decode';
import type { FieldChange, SecretCodec, SettingsVersion, StoredGroups } from './model';

export interface PlannedChange {
  groups: StoredGroups;
  changedGroups: SettingsGroup[];
  changes: FieldChange[];
}

/**
 * Fields a group needs while its ENABLED switch is on: turning LDAP on without a server, or the
 * banner on without a message, leaves the platform half-configured.
 */
export const REQUIRED_WHILE_ENABLED: Partial<Record<SettingsGroup, readonly string[]>> = {
  ldap: ['SERVER_URI'],
  smtp: ['EMAIL_HOST'],
  feedback: ['feedback_link'],
  oauth: ['CLIENT_ID', 'CLIENT_SECRET'],
  global_banner: ['message'],
};

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** Problems of the settings a change would produce, checked for the groups it touches. */
export function consistencyErrors(next: DecodedSettings, touched: readonly SettingsGroup[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const group of touched) {
    const required = REQUIRED_WHILE_ENABLED[group];
    const values = next.settings[group] as Record<string, unknown>;
    if (!required || values.ENABLED !== true) continue;
    for (const field of required) {
      const present = values[field] !== '' || next.unreadable.has(`${group}.${field}`);
      if (!present) (errors[`${group}.${field}`] ??= []).push(`is required while ${group}.ENABLED is true`);
    }
  }
  return errors;
}

/**
 * What a PATCH changes: each field whose value differs from the current one. A secret sent back
 * masked (as a reader got it) keeps the stored secret; an unchanged secret keeps its ciphertext.
 * Throws a ValidationError, naming the fields, when the result would be inconsistent.
 */
export function planPatch(
  current: SettingsVersion,
  decoded: DecodedSettings,
  patch: GeneralSettingsPatch,
  codec: SecretCodec,
): PlannedChange | null {
  const groups = structuredClone(current.groups);
  const changes: FieldChange[] = [];
  const changedGroups = new Set<SettingsGroup>();
  const touched = SETTINGS_GROUPS.filter((group) => patch[group] !== undefined);
  for (const group of touched) {
    const currentValues = decoded.settings[group] as Record<string, unknown>;
    for (const [field, value] of Object.entries(patch[group] as Record<string, unknown>)) {
      if (value === undefined) continue;
      const path = `${group}.${field}`;
      const secret = isSecretSetting(group, field);
      if (secret && isMaskedSecret(value as string)) continue;
      if (sameValue(value, currentValues[field]) && !decoded.unreadable.has(path)) continue;
      (groups[group] ??= {})[field] = encodeField(group, field, value, codec);
      changedGroups.add(group);
      if (secret) changes.push({ field: path, secret: true });
      else if (isJsonSetting(group, field)) changes.push({ field: path });
      else changes.push({ field: path, old: currentValues[field], new: value });
    }
  }
  const errors = consistencyErrors(decodeSettings(groups, codec), touched);
  if (Object.keys(errors).length > 0) {
    throw new ValidationError('the settings would be inconsistent; nothing was changed', { errors });
  }
  if (changes.length === 0) return null;
  return { groups, changedGroups: SETTINGS_GROUPS.filter((g) => changedGroups.has(g)), changes };
}

/** Re-encrypts, under the active key, every secret stored under a retired key (or unencrypted). */
export function planReencryption(current: SettingsVersion, codec: SecretCodec): PlannedChange | null {
  const groups = structuredClone(current.groups);
  const changes: FieldChange[] = [];
  for (const group of SETTINGS_GROUPS) {
    for (const [field, stored] of Object.entries(groups[group] ?? {})) {
      if (
        !isSecretSetting(group, field) ||
        typeof stored !== 'string' ||
        stored === '' ||
        !codec.needsReseal(stored)
      )
        continue;
      const plaintext = codec.open(group, field, stored);
      if (plaintext === null) continue; // its key is gone: nothing can re-encrypt it
      groups[group]![field] = codec.seal(group, field, plaintext);
      changes.push({ field: `${group}.${field}`, secret: true });
    }
  }
  return changes.length === 0 ? null : { groups, changedGroups: [], changes };
}
