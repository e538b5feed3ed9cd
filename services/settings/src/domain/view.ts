import { maskSecret, SECRET_MASK } from '@pack/secrets';
import {
  deriveAiIntegration,
  SETTINGS_SECRET_FIELDS,
  SETTINGS_WRITE_ONLY_FIELDS,
  type GeneralSettingsView,
  type Role,
  type SettingsGroup,
} from '@pack/contracts';
import type { DecodedSettings } from './decode';

/**
 * What a reader sees: secrets masked (an undecryptable one shows the bare mask), write-only
 * fields absent, the derived flag computed.
 */
export function settingsView({ settings, unreadable }: DecodedSettings): GeneralSettingsView {
  const view = {} as Record<SettingsGroup, Record<string, unknown>>;
  for (const [group, fields] of Object.entries(deriveAiIntegration(settings)) as [
    SettingsGroup,
    Record<string, unknown>,
  ][]) {
    const copy: Record<string, unknown> = { ...fields };
    for (const name of SETTINGS_SECRET_FIELDS[group] ?? []) {
      const value = copy[name];
      copy[name] = unreadable.has(`${group}.${name}`)
        ? SECRET_MASK
        : maskSecret(typeof value === 'string' ? value : '');
    }
    for (const name of SETTINGS_WRITE_ONLY_FIELDS[group] ?? []) delete copy[name];
    view[group] = copy;
  }
  return view as GeneralSettingsView;
}

/**
 * What a reader with `role` sees. Admins get the view as it is (a set secret shows its last
 * characters, so an admin can tell which one is stored); everyone else gets the bare mask for a
 * set secret and not a character of it. An unset secret stays empty for all.
 */
export function viewFor(role: Role, view: GeneralSettingsView): GeneralSettingsView {
  if (role === 'admin') return view;
  const masked = { ...view } as Record<SettingsGroup, Record<string, unknown>>;
  for (const [group, names] of Object.entries(SETTINGS_SECRET_FIELDS) as [
    SettingsGroup,
    readonly string[],
  ][]) {
    const fields = { ...masked[group] };
    for (const name of names)
      if (typeof fields[name] === 'string' && fields[name] !== '') fields[name] = SECRET_MASK;
    masked[group] = fields;
  }
  return masked as GeneralSettingsView;
}
