import { maskSecret, SECRET_MASK } from '@pack/secrets';
import {
  deriveAiIntegration,
  SETTINGS_SECRET_FIELDS,
  SETTINGS_WRITE_ONLY_FIELDS,
  type GeneralSettingsView,
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
